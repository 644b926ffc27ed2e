#include "session/map_batch.h"

#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
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
