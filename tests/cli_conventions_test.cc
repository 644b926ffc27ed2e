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
  CliRun before = gpumap_here({"--simulate", "seed-mixed", "which", "cuda:1"});
  CliRun after = gpumap_here({"which", "cuda:1", "--simulate", "seed-mixed"});
  ASSERT_EQ(before.code, 0) << before.err;
  EXPECT_EQ(before.out, after.out);
  CliRun json_first = gpumap_here({"--json", "--simulate", "seed-mixed", "list"});
  ASSERT_EQ(json_first.code, 0) << json_first.err;
  nlohmann::json j = nlohmann::json::parse(json_first.out);
  EXPECT_EQ(j["gpus"].size(), 4u) << json_first.out;
  CliRun eq_form = gpumap_here({"--simulate=seed-mixed", "--wide", "list"});
  EXPECT_EQ(eq_form.code, 0) << eq_form.err;
  EXPECT_NE(eq_form.out.find("GPU-"), std::string::npos);
  // Without a command after them they still mean `gpumap map`.
  CliRun map = gpumap_here({"--simulate", "seed-mixed", "--json"});
  ASSERT_EQ(map.code, 0) << map.err;
  EXPECT_TRUE(nlohmann::json::parse(map.out).contains("cuda"));
}

TEST(CliConventions, WithJsonAnErrorIsAlsoAJsonObjectOnStdout) {
  CliRun r = gpumap_here({"which", "9", "--json", "--simulate", "seed-mixed"});
  EXPECT_EQ(r.code, 2);
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails the test) when it is not JSON
  EXPECT_EQ(j["error"]["code"], 2);
  EXPECT_NE(j["error"]["message"].get<std::string>().find("`9`"), std::string::npos) << r.out;
  EXPECT_FALSE(j["error"]["hint"].get<std::string>().empty());
  EXPECT_NE(r.err.find("gpumap: error: "), std::string::npos) << r.err;  // people still read stderr
  // Without --json stdout stays empty.
  EXPECT_EQ(gpumap_here({"which", "9", "--simulate", "seed-mixed"}).out, "");
}

TEST(CliConventions, AHintOfSeveralLinesPrintsAsIndentedLines) {
  CliRun r = gpumap_here({"which", "9", "--simulate", "seed-mixed"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find('?'), std::string::npos) << r.err;  // newlines used to show as `?`
  EXPECT_NE(r.err.find("\n          0  GPU-"), std::string::npos) << r.err;  // each GPU on a line of its own
}

TEST(CliConventions, TheGpusNotVisibleAreListedWithSeparators) {
  CliRun r = gpumap_here({"map", "--simulate", "seed-mixed", "--env", "CUDA_VISIBLE_DEVICES=0"});
  ASSERT_EQ(r.code, 0) << r.err;
  size_t at = r.out.find("Not visible to this process: GPU ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find("), GPU "), std::string::npos) << line;  // one GPU, then the next
}

TEST(CliConventions, AnOrdinalThatDoesNotExistPointsAtTheOneThatDoes) {
  // The seed's pipeline(device=2) under CUDA_VISIBLE_DEVICES=4.
  CliRun r = gpumap_here({"cuda:2", "--simulate", "dgx8"}, {"CUDA_VISIBLE_DEVICES=4"});
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
  CliRun pipe = gpumap_here({"ps", "--simulate", host});
  EXPECT_NE(pipe.out.find("python3 train.py --config llama-70b.yaml 30"), std::string::npos) << pipe.out;
  EXPECT_NE(pipe.out.find("LEASE"), std::string::npos) << pipe.out;
}

// Issue 43 item 4, each as seen on HEAD e9e4217.

// `gpumap --env X=Y doctor` was read as `map doctor` (and hinted `gpumap which doctor`).
TEST(CliConventions, EnvAndUnsetBeforeTheCommand) {
  CliRun r = gpumap_here({"--env", "CUDA_VISIBLE_DEVICES=all", "doctor", "--simulate", "seed-mixed"});
  EXPECT_EQ(r.code, 7) << r.out << r.err;
  EXPECT_NE(r.out.find("[error] container-keyword"), std::string::npos) << r.out << r.err;
  CliRun u = gpumap_here({"--unset=CUDA_VISIBLE_DEVICES", "--simulate", "dgx8", "doctor"}, {"CUDA_VISIBLE_DEVICES=all"});
  EXPECT_EQ(u.code, 0) << u.out << u.err;
  // A command that does not take it refuses it by name.
  CliRun list = gpumap_here({"--env", "CUDA_VISIBLE_DEVICES=1", "list", "--simulate", "dgx8"});
  EXPECT_EQ(list.code, 2);
  EXPECT_NE(list.err.find("unknown option `--env`"), std::string::npos) << list.err;
}

// Options and query fields get a did-you-mean, as commands do; `help <typo>` is the command typo.
TEST(CliConventions, TyposGetTheClosestName) {
  CliRun opt = gpumap_here({"list", "--jsno", "--simulate", "dgx8"});
  EXPECT_EQ(opt.code, 2);
  EXPECT_NE(opt.err.find("unknown option `--jsno` (did you mean `--json`?)"), std::string::npos) << opt.err;
  CliRun field = gpumap_here({"list", "--query-gpu=index,naem", "--simulate", "dgx8"});
  EXPECT_EQ(field.code, 2);
  EXPECT_NE(field.err.find("`naem` is not a field gpumap knows (did you mean `name`?)"), std::string::npos) << field.err;
  CliRun help = gpumap_here({"help", "doctr"});
  EXPECT_EQ(help.code, 2) << help.out;
  EXPECT_NE(help.err.find("unknown command `doctr` (did you mean `doctor`?)"), std::string::npos) << help.err;
  EXPECT_EQ(gpumap_here({"help", "doctor"}).code, 0);
}

// nvidia-smi's spelling of ps's query; --help lists only the options a command takes.
TEST(CliConventions, NvidiaSmiSpellingAndHelpThatFits) {
  CliRun ps = gpumap_here({"ps", "--query-compute-apps=pid,gpu_uuid", "--format=csv", "--simulate", "h200x2"});
  EXPECT_EQ(ps.code, 0) << ps.err;
  EXPECT_EQ(ps.out.rfind("pid, gpu_uuid", 0), 0u) << ps.out;
  for (const char* cmd : {"top", "metrics", "serve"}) {
    CliRun h = gpumap_here({cmd, "--help"});
    EXPECT_EQ(h.code, 0) << cmd;
    EXPECT_EQ(h.out.find("\n  --json"), std::string::npos) << cmd << " --help lists --json, which it refuses:\n" << h.out;
  }
  EXPECT_NE(gpumap_here({"doctor", "--help"}).out.find("\n  --json"), std::string::npos);
}

// Hints keep the options that produced the state; words that fit one GPU; what was typed.
TEST(CliConventions, HintsAndWordsFitWhatWasAsked) {
  std::string file = temp_dir("snap") + "/s.json";
  CliRun save = gpumap_here({"snapshot", "save", file, "--simulate", "dgx8"});
  ASSERT_EQ(save.code, 0) << save.err;
  EXPECT_NE(save.out.find("gpumap snapshot diff " + file + " --simulate dgx8"), std::string::npos) << save.out;
  CliRun one = gpumap_here({"which", "1", "--simulate", "dgx8"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("To get exactly this GPU as cuda:0:"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("cuda:0..0"), std::string::npos) << one.out;
  CliRun twice = gpumap_here({"which", "1", "1", "--simulate", "dgx8"});
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("`1` and `1` name the same GPU, nvidia-smi GPU 1"), std::string::npos) << twice.err;
  // Eight identical GPUs: FASTEST_FIRST is nvidia-smi's order there; on the mixed box it is not.
  CliRun same = gpumap_here({"explain", "--simulate", "dgx8"});
  EXPECT_NE(same.out.find("which on this host is nvidia-smi's order too"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("not nvidia-smi's order"), std::string::npos) << same.out;
  CliRun mixed = gpumap_here({"explain", "--simulate", "seed-mixed"});
  EXPECT_NE(mixed.out.find("not nvidia-smi's order"), std::string::npos) << mixed.out;
}

}  // namespace
}  // namespace gpumap::testing
