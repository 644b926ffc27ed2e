// The renderings (output/) of `map_batch` answers, in process: the tests of
// src/session/map_batch_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
#include "session/map_batch.h"

#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/map_view.h"
#include "session/map.h"

namespace gpumap {
namespace {

using testing::FakeSession;

// map --batch as one operation on a simulated host (moved from the black-box CliMap test): each
// line is answered as `map` answers its environment, the environment's values hold where a line
// leaves a variable out, and the driver's order is asked once on a mixed host.
TEST(AnswerMapBatch, EachLineIsAnsweredLikeMapInItsEnvironment) {
  std::istringstream file(
      "{\"CUDA_VISIBLE_DEVICES\": \"1,0\", \"CUDA_DEVICE_ORDER\": null}\n"
      "{\"CUDA_VISIBLE_DEVICES\": \"0,0\"}\n"
      "\n"
      "{\"CUDA_DEVICE_ORDER\": \"pci_bus_id\"}\n"
      "{\"CUDA_VISIBLE_DEVICES_hex\": \"3220a02c30\", \"CUDA_DEVICE_ORDER\": \"PCI_BUS_ID\"}\n"
      "{\"CUDA_VISIBLE_DEVICES\": null}\n"
      "{\"CUDA_VISIBLE_DEVICES\": \"GPU-1722a9ae-1e34-595f-b548-742051b181a7x,0\"}\n");
  // The environment's CUDA_VISIBLE_DEVICES=3 holds where a line leaves the variable out.
  FakeSession f("seed-mixed", {"CUDA_VISIBLE_DEVICES=3"});
  Session& s = f.session();
  MapBatchAnswer a = answer_map_batch(s, s.env(), {.file = "-"}, file);
  std::vector<Json> lines;
  while (std::optional<MapBatchCase> c = a.next())
    lines.push_back(batch_case_json(s.snapshot(), c->line, c->env, c->mapping));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_FALSE(a.next()) << "the sequence stays at its end";
  // Mixed models: the driver is asked for its order once, then the cache answers.
  EXPECT_EQ(lines[0]["cuda"]["source"], "driver");
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i]["cuda"]["order"] == "FASTEST_FIRST") {
      EXPECT_EQ(lines[i]["cuda"]["source"], "cache") << i;
    }
  }
  struct Want {
    int line;
    std::vector<std::string> env;  // what `map --env` gets for the same question
  };
  std::vector<Want> want = {{1, {"CUDA_VISIBLE_DEVICES=1,0"}},
                            {2, {"CUDA_VISIBLE_DEVICES=0,0"}},
                            {4, {"CUDA_VISIBLE_DEVICES=3", "CUDA_DEVICE_ORDER=pci_bus_id"}},
                            {5, {"CUDA_VISIBLE_DEVICES=2 \xa0,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
                            {6, {}},
                            {7, {"CUDA_VISIBLE_DEVICES=GPU-1722a9ae-1e34-595f-b548-742051b181a7x,0"}}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(lines[i]["line"], want[i].line);
    EXPECT_EQ(lines[i]["simulated"], true);
    Session single_process = f.other(want[i].env);
    Json single = map_json(single_process.snapshot(), answer_map(single_process, single_process.env(), {}));
    // Where the base order came from differs: each single answer may ask the driver, the batch
    // asks once and reads its cache after.
    for (Json* j : {&lines[i]["cuda"], &single["cuda"]})
      for (const char* key : {"source", "order_note", "driver_ms"}) j->erase(key);
    EXPECT_EQ(lines[i]["cuda"], single["cuda"]) << "line " << want[i].line;
    EXPECT_EQ(lines[i]["environment"], single["environment"]) << "line " << want[i].line;
  }
  EXPECT_EQ(lines[0]["cuda"]["devices"].size(), 2u);
  EXPECT_EQ(lines[1]["cuda"]["error"], "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_EQ(lines[2]["cuda"]["error"], "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_EQ(lines[3]["cuda"]["devices"][0]["nvml_index"], 2);  // strtoul: "2 \xa0" is 2
  EXPECT_EQ(lines[4]["cuda"]["devices"].size(), 4u);
}

TEST(AnswerMapBatch, TextLinesFromStdin) {
  std::istringstream file("{\"CUDA_VISIBLE_DEVICES\": \"1,0\"}\n{\"CUDA_VISIBLE_DEVICES\": \"0,0\"}\n\n{}\n");
  FakeSession f("h200x2");
  Session& s = f.session();
  MapBatchAnswer a = answer_map_batch(s, s.env(), {.file = "-"}, file);
  std::ostringstream out;
  write_map_batch(out, s.snapshot(), a, false);
  EXPECT_EQ(out.str(),
            "line 1: cuda:0 = nvidia-smi 1 GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a, cuda:1 = nvidia-smi 0 "
            "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\n"
            "line 2: CUDA would fail (CUDA_ERROR_INVALID_DEVICE)\n"
            "line 4: cuda:0 = nvidia-smi 0 GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab, cuda:1 = nvidia-smi 1 "
            "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a\n");
  // --json: one document per line, each whole on its line.
  std::istringstream again("{\"CUDA_VISIBLE_DEVICES\": \"1\"}\n{}\n");
  MapBatchAnswer j = answer_map_batch(s, s.env(), {.file = "-"}, again);
  std::ostringstream docs;
  write_map_batch(docs, s.snapshot(), j, true);
  std::istringstream read(docs.str());
  std::vector<Json> lines;
  for (std::string line; std::getline(read, line);) lines.push_back(Json::parse(line));
  ASSERT_EQ(lines.size(), 2u) << docs.str();
  EXPECT_EQ(lines[0]["line"], 1);
  EXPECT_EQ(lines[0]["cuda"]["devices"][0]["nvml_index"], 1);
  EXPECT_EQ(lines[1]["line"], 2);
}

}  // namespace
}  // namespace gpumap
