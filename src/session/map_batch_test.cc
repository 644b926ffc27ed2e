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

std::vector<BatchCase> read(const std::string& text) {
  std::istringstream in(text);
  return read_batch(in, "cases.jsonl");
}

std::string usage_error(const std::string& text) {
  try {
    read(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.hint().find("CUDA_VISIBLE_DEVICES"), std::string::npos) << e.hint();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << text;
  return "";
}

TEST(MapBatch, ReadsValuesUnsetsAndLeftOutKeys) {
  auto cases = read("{\"CUDA_VISIBLE_DEVICES\": \"1,0\", \"CUDA_DEVICE_ORDER\": null}\n"
                    "\n"
                    "{\"CUDA_DEVICE_ORDER\": \"PCI_BUS_ID\"}\n"
                    "{\"CUDA_VISIBLE_DEVICES_hex\": \"31a00a\", \"CUDA_DEVICE_ORDER\": \"\"}\n"
                    "{}\r\n");
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].line, 1u);
  EXPECT_EQ(cases[0].cuda_visible_devices, std::optional<std::string>("1,0"));
  ASSERT_TRUE(cases[0].cuda_device_order.has_value());
  EXPECT_FALSE(cases[0].cuda_device_order->has_value());  // null: unset
  EXPECT_EQ(cases[1].line, 3u);                             // the blank line is skipped, not renumbered
  EXPECT_FALSE(cases[1].cuda_visible_devices.has_value());  // left out: the environment's
  EXPECT_EQ(cases[2].cuda_visible_devices, std::optional<std::string>(std::string("1\xa0\n")));
  EXPECT_EQ(cases[2].cuda_device_order, std::optional<std::string>(""));
  EXPECT_EQ(cases[3].line, 5u);
}

// Issue 56 item 10: a line is read up to kBatchMaxLineBytes, never whole: a longer one is an
// error naming its line and the limit (the old reader took a 2 MiB line, and /dev/zero until the
// memory ran out).
TEST(MapBatch, ALineLongerThanTheLimitIsRefusedNamingItsNumberAndTheLimit) {
  std::string big = "{\"CUDA_VISIBLE_DEVICES\": \"" + std::string(2 << 20, '0') + "\"}";
  std::string m = usage_error("{}\n\n" + big + "\n{}\n");
  EXPECT_NE(m.find("cases.jsonl line 3: longer than 1048576 bytes"), std::string::npos) << m.substr(0, 200);
  // Just under the limit is a line like any other; the last line needs no newline.
  std::string fits = "{\"CUDA_VISIBLE_DEVICES\": \"" + std::string(kBatchMaxLineBytes - 40, '0') + "\"}";
  auto cases = read("{}\n" + fits);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].cuda_visible_devices->value().size(), kBatchMaxLineBytes - 40);
}

TEST(MapBatch, EnvironmentSetsUnsetsAndKeeps) {
  Environment base = Environment::from_strings({"CUDA_VISIBLE_DEVICES=0", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "HOME=/h"});
  auto cases = read("{\"CUDA_VISIBLE_DEVICES\": \"1\", \"CUDA_DEVICE_ORDER\": null}\n{}\n");
  Environment e = batch_environment(base, cases[0]);
  EXPECT_EQ(e.get("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_FALSE(e.get("CUDA_DEVICE_ORDER").has_value());
  EXPECT_EQ(e.get("HOME"), "/h");
  Environment kept = batch_environment(base, cases[1]);
  EXPECT_EQ(kept.get("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(kept.get("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
}

TEST(MapBatch, BadLinesNameTheFileAndLine) {
  EXPECT_NE(usage_error("{}\n{\"CUDA_VISIBLE_DEVICES\": \"0\"\n").find("cases.jsonl line 2: not valid JSON"), std::string::npos);
  EXPECT_NE(usage_error("[1]\n").find("line 1: not a JSON object"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE\": \"0\"}\n").find("unknown key `CUDA_VISIBLE`"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES\": 0}\n").find("must be a string or null"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES_hex\": \"3\"}\n").find("not an even number of hex digits"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES_hex\": \"zz\"}\n").find("hex digits"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES_hex\": null}\n").find("must be a string"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES\": \"0\\u00001\"}\n").find("NUL byte"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES_hex\": \"3000\"}\n").find("NUL byte"), std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_DEVICE_ORDER\": \"x\", \"CUDA_DEVICE_ORDER_hex\": \"78\"}\n").find("given twice"),
            std::string::npos);
  EXPECT_NE(usage_error("{\"CUDA_VISIBLE_DEVICES\": \"\xff\"}\n").find("NAME_hex"), std::string::npos);
  EXPECT_NE(usage_error(std::string(100, '[') + std::string(100, ']') + "\n").find("levels deep"), std::string::npos);
}

// map --batch as one operation on a simulated host (moved from the black-box CliMap test): each
// line is answered as `map` answers its environment, the environment's values hold where a line
// leaves a variable out, and the driver's order is asked once on a mixed host.
TEST(AnswerMapBatch, EachLineIsAnsweredLikeMapInItsEnvironment) {
  std::istringstream file("{\"CUDA_VISIBLE_DEVICES\": \"1,0\", \"CUDA_DEVICE_ORDER\": null}\n"
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
  while (std::optional<MapBatchCase> c = a.next()) lines.push_back(batch_case_json(s.snapshot(), c->line, c->env, c->mapping));
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

// Nothing half-done: a bad line, a missing file or an option --batch does not take refuses the
// run before any line is answered (the answer is never made).
TEST(AnswerMapBatch, RefusesBeforeAnsweringAnyLine) {
  FakeSession f("h200x2");
  Session& s = f.session();
  auto refusal = [&](const std::string& text, const MapBatchRequest& r) -> std::string {
    std::istringstream in(text);
    try {
      answer_map_batch(s, s.env(), r, in);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no refusal for " << text;
    return "";
  };
  const std::string good = "{\"CUDA_VISIBLE_DEVICES\": \"1\"}\n";
  EXPECT_NE(refusal(good + "{\"CUDA_VISIBLE_DEVICE\": \"1\"}\n", {.file = "-"}).find("- line 2: unknown key `CUDA_VISIBLE_DEVICE`"),
            std::string::npos);
  EXPECT_NE(refusal("", {.file = f.dir() + "/none.jsonl"}).find("none.jsonl: cannot be opened"), std::string::npos);
  EXPECT_NE(refusal(good, {.file = "-", .check = true}).find("--batch and --check"), std::string::npos);
  EXPECT_NE(refusal(good, {.file = "-", .probe = true}).find("--batch and --probe"), std::string::npos);
  EXPECT_NE(refusal(good, {.file = "-", .line = true}).find("--batch and --line"), std::string::npos);
  EXPECT_NE(refusal(good, {.file = "-", .asked = {"cuda:0"}}).find("--batch and cuda:N"), std::string::npos);
  // The options are refused before the file is read: a missing file is not what is said.
  EXPECT_NE(refusal("", {.file = f.dir() + "/none.jsonl", .check = true}).find("--batch and --check"), std::string::npos);
}

}  // namespace
}  // namespace gpumap
