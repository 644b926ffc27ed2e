// The renderings (output/) of `map` answers, in process: the tests of
// src/session/map_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// answer_map in process (tests/fake_session.h): every field of the answer `gpumap map`, its
// JSON and its log line are written from, including the failure answers.
#include "session/map.h"

#include <fstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/map_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

bool has(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return true;
  return false;
}

using testing::code_of;

TEST(AnswerMap, AVisibleListNarrowsAndRenumbersAndSaysWhatItHides) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  Session& s = f.session();
  MapAnswer a = answer_map(s, s.env(), {.asked = {"cuda:0"}});
  EXPECT_EQ(a.mapping.view.error, CudaInitError::kNone);
  EXPECT_EQ(a.mapping.view.uuids, std::vector<std::string>{kH1});
  ASSERT_EQ(a.not_visible.size(), 1u);
  EXPECT_EQ(a.not_visible[0].nvml_index, 0u);
  EXPECT_EQ(a.not_visible[0].uuid, kH0);
  ASSERT_EQ(a.asked.size(), 1u);
  EXPECT_EQ(a.asked[0].nvml_index, 1);
  EXPECT_EQ(a.asked[0].uuid, kH1);
  EXPECT_EQ(a.env.get("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_FALSE(a.where.container);
  EXPECT_FALSE(a.check);
  EXPECT_EQ(a.exit_code(), kExitOk);
  // The log line and the JSON come from this answer alone.
  EXPECT_EQ(map_line(s.snapshot(), a), std::string("gpumap: cuda:0 = nvidia-smi 1 ") + kH1 + "; 0 finding(s)");
  Json j = map_json(s.snapshot(), a);
  EXPECT_EQ(j["not_visible"], Json::array({0}));
  EXPECT_EQ(j["asked_cuda"][0]["nvml_index"], 1);
  EXPECT_EQ(j["cuda"]["devices"][0]["uuid"], kH1);
}

TEST(AnswerMap, AnOtherEnvironmentIsAnsweredNotTheSessions) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  Session& s = f.session();
  MapAnswer a = answer_map(
      s, Environment::from_strings({"CUDA_VISIBLE_DEVICES=1,0", "SLURM_PROCID=3", "SLURMD_NODENAME=node7"}), {});
  EXPECT_EQ(a.mapping.view.uuids, (std::vector<std::string>{kH1, kH0}));
  EXPECT_TRUE(a.not_visible.empty());
  EXPECT_EQ(map_line(s.snapshot(), a).rfind("gpumap: rank 3 on node7: cuda:0 = nvidia-smi 1 ", 0), 0u);
}

TEST(AnswerMap, TheOrderTrapIsAFindingWithItsFix) {
  FakeSession f("seed-mixed");
  MapAnswer a = answer_map(f.session(), f.session().env(), {});
  ASSERT_EQ(a.mapping.view.uuids.size(), 4u);
  EXPECT_EQ(f.session().snapshot().nvml_index_of(a.mapping.view.uuids[0]), 1);  // FASTEST_FIRST: the H100
  ASSERT_TRUE(has(a.findings, "order-differs"));
  std::string line = map_line(f.session().snapshot(), a);
  EXPECT_NE(line.find("1 finding(s): order-differs (run gpumap doctor)"), std::string::npos) << line;
}

TEST(AnswerMap, CudaFailingIsAnAnswerNotAnError) {
  FakeSession f("h200x2", {"CUDA_DEVICE_ORDER=pci_bus_id"});
  MapAnswer a = answer_map(f.session(), f.session().env(), {});
  EXPECT_NE(a.mapping.view.error, CudaInitError::kNone);
  EXPECT_TRUE(a.mapping.view.uuids.empty());
  EXPECT_FALSE(a.mapping.view.error_reason.empty());
  EXPECT_TRUE(has(a.findings, "device-order-invalid"));
  EXPECT_EQ(a.exit_code(), kExitOk);
  std::string text = map_text(f.session().snapshot(), a, TermStyle{});
  EXPECT_NE(text.find("CUDA would FAIL to initialise"), std::string::npos) << text;
  EXPECT_NE(map_line(f.session().snapshot(), a).find(" CUDA would fail ("), std::string::npos);
}

TEST(AnswerMap, InsideAContainerEachDeviceCarriesItsHostNumber) {
  FakeSession f("h200x2", {"NVIDIA_VISIBLE_DEVICES=1"});
  Session& s = f.session();
  s.enter_container("1");  // what a container started with NVIDIA_VISIBLE_DEVICES=1 sees
  MapAnswer a = answer_map(s, s.env(), {});
  EXPECT_TRUE(a.where.container);
  ASSERT_EQ(a.mapping.view.uuids, std::vector<std::string>{kH1});
  auto outer = outer_number(s.snapshot(), a.where, kH1);
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->value, 1u);
  EXPECT_STREQ(outer->key, "host_index");
  Json j = map_json(s.snapshot(), a);
  EXPECT_EQ(j["cuda"]["devices"][0]["host_index"], 1);
  EXPECT_EQ(j["cuda"]["devices"][0]["nvml_index"], 0);
  std::string text = map_text(s.snapshot(), a, TermStyle{});
  EXPECT_NE(text.find("HOST"), std::string::npos) << text;
}

TEST(AnswerMap, CheckComparesThePredictionWithTheDriversProbe) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1,0"});
  Session& s = f.session();
  MapAnswer a = answer_map(s, s.env(), {.check = true});
  ASSERT_TRUE(a.check);
  EXPECT_TRUE(a.check->agree);
  EXPECT_FALSE(a.check->refreshed_cache);
  EXPECT_EQ(a.check->driver.view.uuids, (std::vector<std::string>{kH1, kH0}));
  EXPECT_EQ(a.exit_code(), kExitOk);
  Json j = map_json(s.snapshot(), a);
  EXPECT_EQ(j["check"]["agree"], true);
  EXPECT_EQ(j["check"]["driver"]["devices"][1]["uuid"], kH0);
}

TEST(MapView, BatchLinesNameEachCaseAndItsDevices) {
  FakeSession f("h200x2");
  Session& s = f.session();
  Environment e = Environment::from_strings({"CUDA_VISIBLE_DEVICES=1"});
  Mapping m = s.mapping(e, false);
  EXPECT_EQ(batch_case_line(s.snapshot(), 3, m), std::string("line 3: cuda:0 = nvidia-smi 1 ") + kH1);
  Json j = batch_case_json(s.snapshot(), 3, e, m);
  EXPECT_EQ(j["line"], 3);
  EXPECT_EQ(j["environment"]["CUDA_VISIBLE_DEVICES"], "1");
  EXPECT_EQ(j["torch"]["device_count"], 1);
  Mapping none = s.mapping(Environment::from_strings({"CUDA_VISIBLE_DEVICES="}), false);
  EXPECT_EQ(batch_case_line(s.snapshot(), 4, none), "line 4: CUDA would fail (CUDA_ERROR_NO_DEVICE)");
}

// The one renderer of `gpumap map`: each format is the writer it names, the log line ends its line.
TEST(MapView, RenderMapWritesTheFormatAsked) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  Session& s = f.session();
  MapAnswer a = answer_map(s, s.env(), {});
  TermStyle st;
  EXPECT_EQ(render_map(s.snapshot(), a, MapFormat::kText, st), map_text(s.snapshot(), a, st));
  EXPECT_EQ(render_map(s.snapshot(), a, MapFormat::kJson, st), dump(map_json(s.snapshot(), a)));
  EXPECT_EQ(render_map(s.snapshot(), a, MapFormat::kLine, st), map_line(s.snapshot(), a) + "\n");
  EXPECT_NE(render_map(s.snapshot(), a, MapFormat::kLine, st).find(std::string("cuda:0 = nvidia-smi 1 ") + kH1),
            std::string::npos);
}

// ---- `gpumap map --json` in process (moved from the black-box CliMap tests, issue 45 item 5):
// each asserts what its CLI run asserted, on the document map_json writes from the answer.

Json map_doc(Session& s) { return map_json(s.snapshot(), answer_map(s, s.env(), {})); }

TEST(MapDocument, SeedMixedPutsTheNewerGpuFirst) {
  FakeSession f("seed-mixed");
  Json j = map_doc(f.session());
  EXPECT_TRUE(j["simulated"].get<bool>());
  auto devs = j["cuda"]["devices"];
  ASSERT_EQ(devs.size(), 4u);
  EXPECT_EQ(devs[0]["nvml_index"], 1);
  EXPECT_EQ(devs[1]["nvml_index"], 0);
  EXPECT_EQ(devs[0]["uuid"], j["gpus"][1]["uuid"]);
  bool found = false;
  for (auto& fd : j["findings"]) found |= fd["id"] == "order-differs";
  EXPECT_TRUE(found) << j["findings"].dump();
  EXPECT_EQ(j["cuda"]["error"], nullptr);
}

TEST(MapDocument, PciBusIdRealignsSeedMixed) {
  FakeSession f("seed-mixed", {"CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  Json j = map_doc(f.session());
  auto devs = j["cuda"]["devices"];
  ASSERT_EQ(devs.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(devs[i]["nvml_index"], i);
  for (auto& fd : j["findings"]) EXPECT_NE(fd["id"], "order-differs");
  EXPECT_EQ(j["cuda"]["source"], "predicted");
}

// Two processes of one machine share the order cache: the first asks the driver, the second reads it.
TEST(MapDocument, MixedHostAsksTheDriverOnceThenUsesTheCache) {
  FakeSession f("seed-mixed");
  Json a = map_doc(f.session());
  EXPECT_EQ(a["cuda"]["source"], "driver");
  Session second = f.other({});
  Json b = map_doc(second);
  EXPECT_EQ(b["cuda"]["source"], "cache");
  EXPECT_EQ(a["cuda"]["devices"], b["cuda"]["devices"]);
}

TEST(MapDocument, CorruptCacheIsIgnoredAndRebuilt) {
  FakeSession f("seed-mixed");
  std::ofstream(f.dir() + "/cache/cuda-order-v1.json") << "{not json";
  Json a = map_doc(f.session());
  EXPECT_EQ(a["cuda"]["source"], "driver");
  EXPECT_EQ(a["cuda"]["devices"][0]["nvml_index"], 1);
  Session second = f.other({});
  EXPECT_EQ(map_doc(second)["cuda"]["source"], "cache");
}

TEST(MapDocument, CudaFailureIsExplainedNotAnEmptyTable) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=0,0"});
  MapAnswer a = answer_map(f.session(), f.session().env(), {});
  EXPECT_EQ(a.exit_code(), kExitOk);
  std::string text = map_text(f.session().snapshot(), a, TermStyle{});
  EXPECT_NE(text.find("CUDA_ERROR_INVALID_DEVICE"), std::string::npos) << text;
  EXPECT_NE(text.find("same GPU twice"), std::string::npos) << text;
  Session empty_order = f.other({"CUDA_DEVICE_ORDER="});
  Json j = map_doc(empty_order);
  EXPECT_EQ(j["cuda"]["error"], "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_TRUE(j["cuda"]["devices"].empty());
}

// --check: the prediction against the simulated driver's probe child, on the measured host's vectors.
TEST(MapDocument, CheckAgreesWithTheFakeDriverOnMeasuredVectors) {
  for (const char* cvd : {"1,0", "0,5,1", "GPU-1722", "1;0", "4294967297", "0,GPU-1722a9ae", "", "-1"}) {
    FakeSession f("measured-h200x2", {std::string("CUDA_VISIBLE_DEVICES=") + cvd});
    MapAnswer a = answer_map(f.session(), f.session().env(), {.check = true});
    EXPECT_EQ(a.exit_code(), kExitOk) << cvd;
    Json j = map_json(f.session().snapshot(), a);
    EXPECT_TRUE(j["check"]["agree"].get<bool>()) << cvd;
  }
}

}  // namespace
}  // namespace gpumap
