// The renderings (output/) of `self` answers, in process: the tests of
// src/session/self_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// The library's operations on its own process (session/self.h) in process, on FakeSession hosts:
// the answers libgpumap.so's devices, verify, locate and pin write, refusals included.  This
// test process has not started CUDA, so every answer is the prediction from the environment
// (the live path is asserted on the GPU host: tools/device/checks/operations_layer_real.sh).
#include "session/self.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "env/device_value.h"
#include "model/error.h"
#include "output/self_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

using testing::code_of;

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

TEST(SelfLocalDevice, TheRankOfEachLauncherCountsTheGpusThisProcessSees) {
  FakeSession f("h200x2", {"MPI_LOCALRANKID=1"});
  LocalDeviceAnswer a = local_device_here(f.session());
  EXPECT_FALSE(a.refusal);
  EXPECT_EQ(a.visible, 2u);
  Json j = local_device_answer_json(a);
  EXPECT_EQ(j["device"], "cuda:1");
  EXPECT_EQ(j["local_rank"]["variable"], "MPI_LOCALRANKID");
  EXPECT_EQ(j["local_rank"]["value"], 1);
  EXPECT_EQ(j["source"], "predicted");
  EXPECT_TRUE(j["error"].is_null());
  // Narrowed to one GPU, the same rank uses cuda:0.
  FakeSession one("h200x2", {"MPI_LOCALRANKID=1", "CUDA_VISIBLE_DEVICES=1"});
  EXPECT_EQ(local_device_answer_json(local_device_here(one.session()))["device"], "cuda:0");
}

TEST(SelfLocalDevice, RefusalsCarryTheCodeOfTheFrontEnds) {
  FakeSession past("h200x2", {"OMPI_COMM_WORLD_LOCAL_RANK=2"});
  LocalDeviceAnswer a = local_device_here(past.session());
  ASSERT_TRUE(a.refusal);
  EXPECT_EQ(a.refusal->code, kExitUnavailable);
  EXPECT_EQ(local_device_answer_json(a)["error"]["code"], kExitUnavailable);
  FakeSession hidden("h200x2", {"CUDA_VISIBLE_DEVICES=-1", "LOCAL_RANK=0"});
  ASSERT_TRUE(local_device_here(hidden.session()).refusal);
  EXPECT_EQ(local_device_here(hidden.session()).refusal->code, kExitUnavailable);
  FakeSession fails("h200x2", {"CUDA_DEVICE_ORDER=pci_bus_id", "LOCAL_RANK=0"});
  ASSERT_TRUE(local_device_here(fails.session()).refusal);
  EXPECT_EQ(local_device_here(fails.session()).refusal->code, kExitCudaWouldFail);
}

DeviceItem item(DeviceItem::Role role, std::optional<int64_t> number, std::string text) {
  DeviceItem d;
  d.role = role;
  d.number = number;
  d.text = text;
  d.what = "device_map['x']";
  d.shown = number ? std::to_string(*number) : "'" + text + "'";
  return d;
}

TEST(SelfCheckDevices, ValuesBecomeOrdinalsOfThisProcess) {
  FakeSession f("h200x2", {});
  using R = DeviceItem::Role;
  DeviceItemsAnswer a = check_devices_here(
      f.session(), {item(R::kValue, 1, ""), item(R::kValue, std::nullopt, "cuda:0"),
                    item(R::kValue, std::nullopt, "cpu"), item(R::kPhysicalKey, std::nullopt, "GPU-a04764cc")});
  ASSERT_FALSE(a.refusal) << a.refusal->message;
  EXPECT_EQ(a.cuda_ordinals, (std::vector<std::optional<uint32_t>>{1u, 0u, std::nullopt, std::nullopt}));
  EXPECT_EQ(device_items_json(a)["cuda_ordinals"], Json::parse("[1, 0, null, null]"));
}

TEST(SelfCheckDevices, AnNvidiaSmiIndexUsedAsAnOrdinalNamesTheOneMeant) {
  // Only nvidia-smi GPU 1 is visible: it is cuda:0, and cuda:1 does not exist.
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  DeviceItem d = item(DeviceItem::Role::kValue, std::nullopt, "cuda:1");
  d.where = "device_map['x'] = 'cuda:1'";
  DeviceItemsAnswer a = check_devices_here(f.session(), {d});
  ASSERT_TRUE(a.refusal);
  EXPECT_EQ(a.refusal->code, kExitUsage);
  EXPECT_EQ(a.refused_as, "not-visible");
  EXPECT_EQ(a.refused_ordinal, 1u);
  EXPECT_EQ(a.refusal->message, "device_map['x'] = 'cuda:1': cuda:1 does not exist here (this process sees 1 GPU)");
  EXPECT_NE(a.refusal->hint.find("nvidia-smi GPU 1 is cuda:0 in this process: use 0"), std::string::npos)
      << a.refusal->hint;
  Json e = device_items_refusal_json(a);
  EXPECT_EQ(e["kind"], "not-visible");
  EXPECT_EQ(e["ordinal"], 1);
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
