// The library's operations on its own process (session/self.h) in process, on FakeSession hosts:
// the answers libgpumap.so's devices, verify, locate and pin write, refusals included.  This
// test process has not started CUDA, so every answer is the prediction from the environment
// (the live path is asserted on the GPU host: tools/device/operations_layer_real.sh).
#include "session/self.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/self_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

int code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

TEST(SelfDevices, AVisibleListGivesItsGpusRenumberedFromZero) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  DevicesAnswer a = devices_here(f.session());
  EXPECT_FALSE(a.live);
  ASSERT_NE(a.snapshot, nullptr);
  EXPECT_EQ(a.mapping.view.uuids, std::vector<std::string>{kH1});
  EXPECT_FALSE(a.refusal);
  EXPECT_TRUE(a.no_driver.empty());
  Json j = devices_answer_json(a);
  ASSERT_EQ(j["devices"].size(), 1u);
  EXPECT_EQ(j["devices"][0]["cuda_ordinal"], 0);
  EXPECT_EQ(j["devices"][0]["nvml_index"], 1);
  EXPECT_EQ(j["devices"][0]["uuid"], kH1);
  EXPECT_EQ(j["source"], "predicted");
}

TEST(SelfDevices, EveryGpuHiddenOnPurposeIsAnEmptyAnswerNotARefusal) {
  // "-1" and "": CPU-only, as doctor reads them too (a note, no error).
  for (const char* cvd : {"CUDA_VISIBLE_DEVICES=-1", "CUDA_VISIBLE_DEVICES="}) {
    FakeSession f("h200x2", {cvd});
    DevicesAnswer a = devices_here(f.session());
    EXPECT_TRUE(a.mapping.view.uuids.empty()) << cvd;
    EXPECT_FALSE(a.refusal) << cvd;
    EXPECT_TRUE(devices_answer_json(a)["devices"].empty()) << cvd;
    for (const Finding& x : a.findings) EXPECT_NE(x.severity, Severity::kError) << cvd << ": " << x.id;
  }
  // "-1,0" gives no GPU too, but the 0 is never read: an error for doctor, so a refusal here
  // (one predicate, model/cuda_view.h gpus_hidden_on_purpose).
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=-1,0"});
  DevicesAnswer a = devices_here(f.session());
  ASSERT_TRUE(a.refusal);
  EXPECT_EQ(a.refusal->code, kExitCudaWouldFail);
  bool error = false;
  for (const Finding& x : a.findings) error |= x.severity == Severity::kError;
  EXPECT_TRUE(error);
}

TEST(SelfDevices, CudaFailingIsARefusalWithTheCudaErrorAndTheFacts) {
  FakeSession f("h200x2", {"CUDA_DEVICE_ORDER=pci_bus_id"});
  DevicesAnswer a = devices_here(f.session());
  ASSERT_TRUE(a.refusal);
  EXPECT_EQ(a.refusal->code, kExitCudaWouldFail);
  EXPECT_FALSE(a.refusal->cuda_error.empty());
  EXPECT_NE(a.refusal->message.find("CUDA would fail to initialise here"), std::string::npos) << a.refusal->message;
  EXPECT_NE(a.refusal->hint.find("CUDA_DEVICE_ORDER"), std::string::npos);
  Json r = refusal_json(*a.refusal);
  EXPECT_EQ(r["code"], kExitCudaWouldFail);
  EXPECT_EQ(r["cuda_error"], a.refusal->cuda_error);
  // The finding that explains it is in the same answer.
  bool explained = false;
  for (const Finding& x : a.findings) explained |= x.severity == Severity::kError;
  EXPECT_TRUE(explained);
}

TEST(SelfVerify, TheExpectedGpusAreOk) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1,0"});
  VerifyAnswer a = verify_here(f.session(), {"1", kH0}, false);
  EXPECT_FALSE(a.refusal);
  EXPECT_EQ(a.expected, (std::vector<std::string>{kH1, kH0}));
  EXPECT_TRUE(a.differences.empty());
  EXPECT_EQ(verify_answer_json(a)["ok"], true);
  // --prefix: the first n only.
  EXPECT_FALSE(verify_here(f.session(), {"1"}, true).refusal);
  EXPECT_TRUE(verify_here(f.session(), {"1"}, false).refusal);
}

TEST(SelfVerify, OtherGpusAreAMismatchWhoseFixGivesTheExpectedOnes) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  VerifyAnswer a = verify_here(f.session(), {"0"}, false);
  ASSERT_TRUE(a.refusal);
  EXPECT_EQ(a.refusal->code, kExitMismatch);
  EXPECT_FALSE(a.differences.empty());
  ASSERT_FALSE(a.fix.empty());
  EXPECT_EQ(a.fix[0].first, "CUDA_VISIBLE_DEVICES");
  EXPECT_NE(a.refusal->hint.find("before CUDA starts"), std::string::npos) << a.refusal->hint;
  // The fix, applied, is verified.
  std::vector<std::string> env;
  for (const auto& [k, v] : a.fix) env.push_back(k + "=" + v);
  Session fixed = f.other(env);
  EXPECT_FALSE(verify_here(fixed, {"0"}, false).refusal) << env[0];
  Json e = verify_refusal_json(a);
  EXPECT_EQ(e["code"], kExitMismatch);
  EXPECT_FALSE(e["fix"].empty());
}

TEST(SelfVerify, ASpecThatNamesNoGpuIsAUsageError) {
  FakeSession f("h200x2");
  EXPECT_EQ(code_of([&] { verify_here(f.session(), {"7"}, false); }), kExitUsage);
  EXPECT_EQ(code_of([&] { verify_here(f.session(), {"GPU-nope"}, false); }), kExitUsage);
}

TEST(SelfLocate, SaysWhereEachGpuIsHereAndTheValueThatGivesThem) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  LocateAnswer a = locate_here(f.session(), {"0", "1"});
  ASSERT_EQ(a.gpus.size(), 2u);
  EXPECT_EQ(a.gpus[0].uuid, kH0);
  EXPECT_FALSE(a.gpus[0].cuda_ordinal);  // hidden by the list
  EXPECT_EQ(a.gpus[1].uuid, kH1);
  EXPECT_EQ(a.gpus[1].cuda_ordinal, 0u);
  EXPECT_EQ(a.cuda_visible_devices, std::string(kH0) + "," + kH1);
  Json j = locate_answer_json(a);
  EXPECT_TRUE(j["gpus"][0]["cuda_ordinal"].is_null());
  EXPECT_EQ(j["gpus"][1]["cuda_ordinal"], 0);
}

TEST(SelfPin, LeasesAFreeGpuAndSaysTheUuidToSet) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 4242, .argv = {"python3", "busy.py"}});
  PickRequest req;
  req.count = 1;
  LeasedGpus held;
  PinAnswer a = pin_here(f.session(), req, {.what = "pin"}, held);
  ASSERT_EQ(a.uuids, std::vector<std::string>{kH1});  // GPU 0 runs another process
  EXPECT_EQ(held.uuids, a.uuids);
  EXPECT_EQ(a.lease_dir, f.lease_dir());
  // UUIDs, which no renumbering moves, and the order they are read in.
  EXPECT_EQ(a.environment, (std::vector<std::pair<std::string, std::string>>{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                                             {"CUDA_VISIBLE_DEVICES", kH1}}));
  EXPECT_EQ(a.mapping.view.uuids, std::vector<std::string>{kH1});
  Json j = pin_answer_json(a, 3);
  EXPECT_EQ(j["lease"], 3);
  EXPECT_EQ(j["devices"][0]["uuid"], kH1);
  // While held, a second process of the machine is refused the same GPU.
  Session second = f.other({});
  LeasedGpus other;
  PickRequest again;
  again.count = 2;
  EXPECT_EQ(code_of([&] { pin_here(second, again, {.what = "pin"}, other); }), kExitUnavailable);
  EXPECT_TRUE(other.leases.empty());
}

}  // namespace
}  // namespace gpumap
