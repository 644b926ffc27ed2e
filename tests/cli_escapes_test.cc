// Every command's text output against terminal escapes from outside (issue 20 point 7): the
// environment (also through --env and map --line), the host's name, driver version and GPU
// names (through snapshot save|diff and verify --snapshot too), --expect values, and srun's
// output in `job`.  Nothing but '\n' below 0x20, no DEL, no C1 (the 8-bit CSI) may reach the
// terminal: each shows as '?' (printable(), src/model/text.h).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

const std::string kOsc = "\x1b]0;owned\x07";  // sets the terminal's title
const std::string kCsi8 = "\xc2\x9b" "2J";      // the 8-bit CSI: clears the screen on some terminals

/// The first control character (C0 but '\n', DEL, C1) in `s`, described; "" when none.
std::string control_in(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(s[i + 1]) < 0xA0;
    if ((c < 0x20 && c != '\n') || c == 0x7F || c1)
      return "byte " + std::to_string(c) + " at " + std::to_string(i) + " in: " + s.substr(i > 40 ? i - 40 : 0, 80);
  }
  return "";
}

class CliEscapes : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = temp_dir("escapes"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// h200x2 with escapes in the hostname, driver version and GPU 0's name (`tag` varies them).
  std::string host(const std::string& tag) {
    std::ifstream in(host_path("h200x2"));
    json h = json::parse(in);
    h["hostname"] = "node" + kOsc + tag;
    h["driver_version"] = "580.159.04" + kCsi8 + tag;
    h["gpus"][0]["name"] = "NVIDIA H200" + kOsc + tag + "\x7f";
    std::string p = dir_ + "/host-" + tag + ".json";
    std::ofstream(p) << h.dump();
    return p;
  }
  std::vector<std::string> env() const {
    return {"GPUMAP_LOCK_DIR=" + dir_ + "/locks", "GPUMAP_STATE_DIR=" + dir_ + "/state", "WORLD_SIZE=2" + kOsc,
            "SLURM_PROCID=0", "SLURMD_NODENAME=n" + kCsi8 + "\x1b[2J", "LOCAL_RANK=0", "GPUMAP_IN_CONTAINER=0"};
  }
  void expect_clean(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> e = env();
    e.insert(e.end(), extra_env.begin(), extra_env.end());
    // run and bind start a command, and job runs srun with gpumap's own path: the built binary;
    // the rest in process (tests/cli_helpers.h).
    bool binary = args[0] == "run" || args[0] == "bind" || args[0] == "job";
    CliRun r = binary ? gpumap(args, e) : gpumap_here(args, e);
    std::string label;
    for (const std::string& a : args) label += a + " ";
    EXPECT_NE(r.code, -1) << label;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << label << r.err;
    EXPECT_EQ(control_in(r.out), "") << label << "(stdout, exit " << r.code << ")";
    EXPECT_EQ(control_in(r.err), "") << label << "(stderr, exit " << r.code << ")";
    EXPECT_FALSE(r.out.empty() && r.err.empty()) << label << "printed nothing";
  }
  std::string dir_;
};

TEST_F(CliEscapes, NoCommandPassesControlCharactersToTheTerminal) {
  std::string h = host("a"), h2 = host("b");
  std::string snap = dir_ + "/snap.json";
  std::string evil = "WORLD_SIZE=4" + kOsc;
  std::vector<std::vector<std::string>> runs = {
      {"map", "--simulate", h},
      {"map", "--simulate", h, "--env", evil, "--env", "CUDA_VISIBLE_DEVICES=0," + kOsc},
      {"map", "--simulate", h, "--line"},
      {"map", "--simulate", h, "--check"},
      {"map", "--simulate", h, "cuda:0"},
      {"list", "--simulate", h},
      {"explain", "--simulate", h, "--env", "CUDA_VISIBLE_DEVICES=GPU-" + kOsc},
      {"which", "--simulate", h, "0"},
      {"which", "--simulate", h, "cuda:0"},
      {"verify", "--simulate", h, "--expect", "0"},
      {"verify", "--simulate", h, "--expect", "1", "--env", "CUDA_VISIBLE_DEVICES=0"},
      {"verify", "--simulate", h, "--expect", "GPU-" + kOsc},
      {"doctor", "--simulate", h, "--env", evil},
      {"pick", "--simulate", h},
      {"pick", "--simulate", h, "--format", "env"},
      {"pick", "--simulate", h, "--include", "0", "--min-free-mib", "999999999"},
      {"run", "--simulate", h, "--include", "0", "--", "true"},
      {"bind", "--simulate", h, "--", "true"},
      {"ps", "--simulate", h},
      {"snapshot", "save", snap, "--simulate", h},
      {"snapshot", "diff", snap, "--simulate", h},
      {"snapshot", "diff", snap, "--simulate", h2},
      {"verify", "--snapshot", snap, "--simulate", h2},
  };
  for (const auto& args : runs) expect_clean(args);
}

TEST_F(CliEscapes, SrunOutputInJobNodeErrors) {
  std::string bin = dir_ + "/bin";
  std::filesystem::create_directories(bin);
  auto script = [&](const std::string& name, const std::string& body) {
    std::ofstream(bin + "/" + name) << "#!/bin/sh\n" << body;
    chmod((bin + "/" + name).c_str(), 0755);
  };
  script("scontrol", "echo 'JobId=5 JobName=x'\necho '   Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)'\n");
  script("srun", "printf '0: \\033]0;owned\\007not json \\302\\2332J\\n'\n");
  expect_clean({"job", "5", "--simulate", host("a")}, {"PATH=" + bin + ":/usr/bin:/bin"});
}

}  // namespace
}  // namespace gpumap::testing
