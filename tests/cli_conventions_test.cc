// Command-line conventions a user of git, kubectl or nvidia-smi expects (issue 22, points 7-9):
// global options before the command, errors as JSON with --json, multi-line hints as lines.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

TEST(CliConventions, GlobalOptionsBeforeTheCommandWorkAsAfterIt) {
  CliRun before = gpumap({"--simulate", "seed-mixed", "which", "cuda:1"});
  CliRun after = gpumap({"which", "cuda:1", "--simulate", "seed-mixed"});
  ASSERT_EQ(before.code, 0) << before.err;
  EXPECT_EQ(before.out, after.out);
  CliRun json_first = gpumap({"--json", "--simulate", "seed-mixed", "list"});
  ASSERT_EQ(json_first.code, 0) << json_first.err;
  nlohmann::json j = nlohmann::json::parse(json_first.out);
  EXPECT_EQ(j["gpus"].size(), 4u) << json_first.out;
  CliRun eq_form = gpumap({"--simulate=seed-mixed", "--wide", "list"});
  EXPECT_EQ(eq_form.code, 0) << eq_form.err;
  EXPECT_NE(eq_form.out.find("GPU-"), std::string::npos);
  // Without a command after them they still mean `gpumap map`.
  CliRun map = gpumap({"--simulate", "seed-mixed", "--json"});
  ASSERT_EQ(map.code, 0) << map.err;
  EXPECT_TRUE(nlohmann::json::parse(map.out).contains("cuda"));
}

TEST(CliConventions, WithJsonAnErrorIsAlsoAJsonObjectOnStdout) {
  CliRun r = gpumap({"which", "9", "--json", "--simulate", "seed-mixed"});
  EXPECT_EQ(r.code, 2);
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails the test) when it is not JSON
  EXPECT_EQ(j["error"]["code"], 2);
  EXPECT_NE(j["error"]["message"].get<std::string>().find("`9`"), std::string::npos) << r.out;
  EXPECT_FALSE(j["error"]["hint"].get<std::string>().empty());
  EXPECT_NE(r.err.find("gpumap: error: "), std::string::npos) << r.err;  // people still read stderr
  // Without --json stdout stays empty.
  EXPECT_EQ(gpumap({"which", "9", "--simulate", "seed-mixed"}).out, "");
}

TEST(CliConventions, AHintOfSeveralLinesPrintsAsIndentedLines) {
  CliRun r = gpumap({"which", "9", "--simulate", "seed-mixed"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find('?'), std::string::npos) << r.err;  // newlines used to show as `?`
  EXPECT_NE(r.err.find("\n          0  GPU-"), std::string::npos) << r.err;  // each GPU on a line of its own
}

TEST(CliConventions, TheGpusNotVisibleAreListedWithSeparators) {
  CliRun r = gpumap({"map", "--simulate", "seed-mixed", "--env", "CUDA_VISIBLE_DEVICES=0"});
  ASSERT_EQ(r.code, 0) << r.err;
  size_t at = r.out.find("Not visible to this process: GPU ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find("), GPU "), std::string::npos) << line;  // one GPU, then the next
}

TEST(CliConventions, AnOrdinalThatDoesNotExistPointsAtTheOneThatDoes) {
  // The seed's pipeline(device=2) under CUDA_VISIBLE_DEVICES=4.
  CliRun r = gpumap({"cuda:2", "--simulate", "dgx8"}, {"CUDA_VISIBLE_DEVICES=4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("`cuda:2` does not exist in this environment: it has only cuda:0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cuda:0 = nvidia-smi GPU 4 (GPU-"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use one of those (cuda:0, device=0)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nvidia-smi GPU 2 is not visible to this process"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--env"), std::string::npos) << r.err;  // the resolver names no CLI flag
}

TEST(CliConventions, PsAtEightyColumnsKeepsTheCommandReadable) {
  Sleeper a({"PATH=/bin"}, "python3 train.py --config llama-70b.yaml");
  Sleeper b({"PATH=/bin"}, "python3 eval.py --checkpoint last");
  std::ifstream in(host_path("h200x2"));
  nlohmann::json h = nlohmann::json::parse(in);
  h["gpus"][0]["processes"] = {{{"pid", a.pid()}, {"used_memory_mib", 70000}}};
  h["gpus"][1]["processes"] = {{{"pid", b.pid()}, {"used_memory_mib", 512}}};
  std::string host = write_temp_file("ps80-host.json", h.dump());
  CliRun r = gpumap_tty({"ps", "--simulate", host}, {"COLUMNS=80", "TERM=xterm"});
  ASSERT_EQ(r.code, 0) << r.out;
  size_t start = r.out.find("PID");
  ASSERT_NE(start, std::string::npos) << r.out;
  std::string table = r.out.substr(start, r.out.find("\n\n", start) - start);
  size_t rows = 0;
  for (size_t pos = 0; pos < table.size();) {
    size_t nl = table.find('\n', pos);
    std::string line = table.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty()) {
      size_t columns = 0;  // code points: every character here is one column wide
      for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
      EXPECT_LE(columns, 80u) << "[" << line << "]";
      ++rows;
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  EXPECT_EQ(rows, 3u) << table;
  // The commands stay told apart: 24 columns of each (23 characters and the ellipsis).
  EXPECT_NE(table.find("python3 train.py --conf"), std::string::npos) << table;
  EXPECT_NE(table.find("python3 eval.py --check"), std::string::npos) << table;
  // A pipe keeps every column whole.
  CliRun pipe = gpumap({"ps", "--simulate", host});
  EXPECT_NE(pipe.out.find("python3 train.py --config llama-70b.yaml 30"), std::string::npos) << pipe.out;
  EXPECT_NE(pipe.out.find("LEASE"), std::string::npos) << pipe.out;
}

}  // namespace
}  // namespace gpumap::testing
