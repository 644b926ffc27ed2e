// Black-box tests of what gpumap writes and reads where other users reach (issue 34, defects 1, 4,
// 6, 10): real device nodes, FIFOs, symbolic links and sub-folders in the way of metrics
// --textfile, snapshot save and job-map; stdout on /dev/full and a reader gone under --watch; a
// watch frame that fails; CSV cells with commas; a fault's call name.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

mode_t kind_of(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

/// What stands in the way of a write: one of each kind a hostile user (or a slip) can put there.
/// The device node needs root (CAP_MKNOD); without it that kind is skipped, and said so.
struct Obstacles {
  std::string dir, secret;
  std::vector<std::pair<std::string, mode_t>> paths;  // path and the type it must keep
  explicit Obstacles(const std::string& tag) : dir(temp_dir(tag)), secret(dir + "/secret") {
    std::ofstream(secret) << "root only\n";
    chmod(secret.c_str(), 0600);
    std::string fifo = dir + "/fifo", link = dir + "/link", dangling = dir + "/dangling", sub = dir + "/sub";
    EXPECT_EQ(mkfifo(fifo.c_str(), 0644), 0);
    EXPECT_EQ(symlink(secret.c_str(), link.c_str()), 0);
    EXPECT_EQ(symlink((dir + "/created-through-link").c_str(), dangling.c_str()), 0);
    EXPECT_EQ(mkdir(sub.c_str(), 0755), 0);
    paths = {{fifo, S_IFIFO}, {link, S_IFLNK}, {dangling, S_IFLNK}, {sub, S_IFDIR}};
    std::string dev = dir + "/null";
    if (mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) paths.push_back({dev, S_IFCHR});
    else std::cerr << "[ skipped  ] the character-device case: mknod needs root (" << std::strerror(errno) << ")\n";
  }
  void expect_untouched() const {
    for (const auto& [p, type] : paths) EXPECT_EQ(kind_of(p), type) << p << " was replaced";
    EXPECT_EQ(read_file(secret), "root only\n");
    struct stat st {};
    ASSERT_EQ(stat(secret.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(kind_of(dir + "/created-through-link"), 0u) << "the dangling link was followed";
  }
};

TEST(CliFiles, MetricsTextfileRefusesWhatIsNotARegularFile) {
  Obstacles o("textfile-obstacles");
  for (const auto& [path, type] : o.paths) {
    CliRun r = gpumap_here({"metrics", "--simulate", "dgx8", "--textfile", path});
    EXPECT_EQ(r.code, 1) << path << ": " << r.err;
    EXPECT_NE(r.err.find("not a regular file: not replacing it"), std::string::npos) << r.err;
  }
  o.expect_untouched();
  std::string ok = o.dir + "/gpumap.prom";
  ASSERT_EQ(gpumap_here({"metrics", "--simulate", "dgx8", "--textfile", ok}).code, 0);
  EXPECT_NE(read_file(ok).find("gpumap_gpu_info"), std::string::npos);
}

// snapshot save used to hang forever on a FIFO (it opened it to see whether it was a snapshot)
// and replace a device node; gpumap_here() ends the test on a 60 s timeout, so a hang fails it.
TEST(CliFiles, SnapshotSaveNeverHangsOnAFifoNorReplacesANode) {
  Obstacles o("snapshot-obstacles");
  for (const auto& [path, type] : o.paths) {
    CliRun r = gpumap_here({"snapshot", "save", "--simulate", "dgx8", path});
    EXPECT_EQ(r.code, 2) << path << ": " << r.err;
    EXPECT_NE(r.err.find(type == S_IFDIR ? " is a folder" : "not replacing it"), std::string::npos) << r.err;
  }
  o.expect_untouched();
  CliRun load = gpumap_here({"verify", "--simulate", "dgx8", "--snapshot", o.dir + "/fifo"});
  EXPECT_EQ(load.code, 2) << load.err;
  EXPECT_NE(load.err.find("is a FIFO"), std::string::npos) << load.err;
}

TEST(CliFiles, JsonFileRefusesALink) {
  Obstacles o("jsonfile-obstacles");
  CliRun r = gpumap({"run", "--simulate", "h200x2", "--json-file", o.dir + "/link", "--", "true"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write --json-file " + o.dir + "/link"), std::string::npos) << r.err;
  o.expect_untouched();
}

// job-map in a folder where things were planted (links, a FIFO, a huge file, a folder others may
// write), and its job and GPU ids: session/job_map_test.cc, in process.  Here what needs the
// process: main prints the refusal, and an escape code in a job id never reaches the terminal.
TEST(CliJobMap, AnEscapeCodeInAJobIdNeverReachesTheTerminal) {
  std::string dir = temp_dir("jobmap-escape") + "/map";
  CliRun r = gpumap_here({"job-map", "--prolog", "--simulate", "mig", "--dir", dir, "--job", "\x1b]0;owned\x07" "42", "--gpus", "1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is not a Slurm job id"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "an escape code reached the terminal";
  EXPECT_EQ(kind_of(dir), 0u) << "nothing is created for a refused id";
}

// stdout that takes nothing (a full disk): every command says so and exits non-zero.
TEST(CliFiles, WritesToAFullDiskAreReported) {
  const std::vector<std::vector<std::string>> commands = {
      {"list"}, {"list", "--json"}, {"map"}, {"explain"}, {"doctor"}, {"ps", "--json"}, {"metrics"},
      {"which", "0"}, {"list", "--query-gpu=index,uuid"}, {"--version"}, {"--help"}};
  for (const auto& args : commands) {
    std::string cmd = std::string("exec '") + GPUMAP_BINARY + "'";
    for (const std::string& a : args) cmd += " '" + a + "'";
    if (args[0] != "--version" && args[0] != "--help") cmd += " --simulate h200x2";
    CliRun r = run_program({"/bin/sh", "-c", cmd + " >/dev/full"});
    std::string shown = args[0] + (args.size() > 1 ? " " + args[1] : "");
    EXPECT_EQ(r.code, 1) << shown << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write the output (stdout): No space left on device"), std::string::npos)
        << shown << ": " << r.err;
  }
}

// A watch whose reader is gone, with SIGPIPE ignored (as systemd runs services): EPIPE ends it.
// run_program's 60 s timeout fails the test if it runs on.
TEST(CliFiles, WatchEndsWhenItsReaderIsGone) {
  std::string cmd = std::string("trap '' PIPE; '") + GPUMAP_BINARY +
                    "' list --simulate h200x2 --watch 0.1 | head -1; echo \"status ${PIPESTATUS[0]}\"";
  CliRun r = run_program({"/bin/bash", "-c", cmd});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("status 1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("cannot write the output (stdout): Broken pipe"), std::string::npos) << r.err;
}

// A frame whose read fails (here the second frame's NVML device count) is reported in that frame
// and the watch goes on to the next one.
TEST(CliFiles, WatchReportsAFailedFrameAndGoesOn) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["faults"] = {{{"call", "nvmlDeviceGetCount"}, {"after", 1}, {"times", 1}, {"error", "NVML_ERROR_UNKNOWN"}}};
  std::string host = write_temp_file("transient.json", h.dump());
  CliRun r = run_program({"/usr/bin/timeout", "--preserve-status", "-s", "INT", "3", GPUMAP_BINARY, "list", "--simulate", host, "--json",
                          "--watch", "0.3"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::stringstream lines(r.out);
  int ok_before = 0, errors = 0, ok_after = 0;
  for (std::string l; std::getline(lines, l);) {
    json j = json::parse(l);
    if (j.contains("error")) {
      ++errors;
      EXPECT_NE(j["error"]["message"].get<std::string>().find("NVML_ERROR_UNKNOWN"), std::string::npos) << l;
    } else {
      (errors ? ok_after : ok_before)++;
      EXPECT_EQ(j["gpus"].size(), 2u);
    }
  }
  EXPECT_EQ(ok_before, 1) << r.out;
  EXPECT_EQ(errors, 1) << r.out;
  EXPECT_GE(ok_after, 1) << "the watch ended at the failed frame: " << r.out;
  CliRun usage = run_program({"/usr/bin/timeout", "10", GPUMAP_BINARY, "map", "--simulate", host, "--watch", "0.2",
                              "--env", "NOEQUALS"});
  EXPECT_EQ(usage.code, 2) << "a usage error ends the watch: " << usage.err;
}

/// `sleep 30` with a command line of `argv_mib` MiB (more arguments "0", each 128 KiB of zeros:
/// sleep adds them up) and `env`; killed and reaped on destruction.  The stack limit is raised in
/// the child so the kernel takes that much (ARG_MAX is a quarter of it), as any user may.
class HostileSleeper {
 public:
  HostileSleeper(size_t argv_mib, std::vector<std::string> env) {
    std::vector<std::string> args = {"sleep", "30"};
    // Built in place: a push_back of a temporary std::string made GCC 12's Release build of the
    // tests (the quick start's) warn -Wstringop-overread inside libstdc++'s char_traits.
    for (size_t i = 0; i < argv_mib * 8; ++i) args.emplace_back(128 * 1024 - 1, '0');
    pid_ = fork();
    if (pid_ == 0) {
      struct rlimit big {1ul << 30, 1ul << 30};
      setrlimit(RLIMIT_STACK, &big);
      std::vector<char*> a, e;
      for (std::string& x : args) a.push_back(x.data());
      a.push_back(nullptr);
      for (std::string& x : env) e.push_back(x.data());
      e.push_back(nullptr);
      execve("/bin/sleep", a.data(), e.data());
      _exit(127);
    }
    for (int i = 0; i < 400; ++i) {  // until /proc shows sleep's command line, not ours
      std::ifstream f("/proc/" + std::to_string(pid_) + "/cmdline");
      std::string c((std::istreambuf_iterator<char>(f)), {});
      if (c.rfind("sleep", 0) == 0 && c.size() > argv_mib << 20) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~HostileSleeper() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  int pid() const { return pid_; }
  bool running() const { return kill(pid_, 0) == 0; }

 private:
  pid_t pid_ = -1;
};

// Processes with a 5 MiB command line and a 120 kB SLURM_JOB_ID on every GPU of a simulated host
// (what any GPU user can start): root's ps and metrics read 4 KiB of each command line, say the
// cut, and bound every label value, instead of copying megabytes per process and GPU.
TEST(CliFiles, HugeCommandLinesAndEnvironmentsAreCutAndSaidSo) {
  std::string slurm_job_id = "SLURM_JOB_ID=" + std::string(120 * 1000, '7');
  HostileSleeper a(5, {"PATH=/bin", slurm_job_id, "CUDA_VISIBLE_DEVICES=1,0"});
  HostileSleeper b(5, {"PATH=/bin", slurm_job_id});
  ASSERT_TRUE(a.running() && b.running()) << "the kernel refused the long command line";
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  for (int g = 0; g < 2; ++g)
    h["gpus"][g]["processes"] = {{{"pid", a.pid()}, {"used_memory_mib", 100}}, {{"pid", b.pid()}, {"used_memory_mib", 100}}};
  std::string host = write_temp_file("hostile.json", h.dump());

  CliRun ps = gpumap_here({"ps", "--json", "--simulate", host});
  ASSERT_EQ(ps.code, 0) << ps.err;
  EXPECT_LT(ps.out.size(), 1u << 20) << "4 rows of 5 MiB command lines came out whole";
  json j = json::parse(ps.out);
  ASSERT_EQ(j["processes"].size(), 4u);
  for (const json& p : j["processes"]) {
    EXPECT_TRUE(p["command_truncated"].get<bool>());
    EXPECT_TRUE(p["environ_truncated"].get<bool>()) << "the 120 kB value is kept to 16 KiB, and said so";
    EXPECT_LE(p["command"].get<std::string>().size(), 4096u);
    EXPECT_EQ(p["command"].get<std::string>().rfind("sleep 30 000", 0), 0u);
    EXPECT_LE(p["slurm_job_id"].get<std::string>().size(), 128u + 3) << "an id of 120 kB in every row";
  }
  EXPECT_EQ(j["processes"][0]["cuda_visible_devices"], "1,0") << "the environment is still read";

  CliRun table = gpumap_here({"ps", "--wide", "--simulate", host});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("0000\u2026"), std::string::npos) << "the table marks the cut command";

  CliRun m = gpumap_here({"metrics", "--simulate", host});
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_LT(m.out.size(), 64u << 10) << m.out.size();
  size_t at = m.out.find("slurm_job_id=\"");
  ASSERT_NE(at, std::string::npos) << m.out;
  size_t end = m.out.find('"', at + 14);
  EXPECT_LE(end - at - 14, 128u + 3);  // kMaxLabelValueBytes, then "…"

  // A variable wholly past the first MiB of the environment is not read, and the row says so.
  HostileSleeper c(0, {"PATH=/bin", "PAD1=" + std::string(120000, 'x'), "PAD2=" + std::string(120000, 'x'),
                       "PAD3=" + std::string(120000, 'x'), "PAD4=" + std::string(120000, 'x'),
                       "PAD5=" + std::string(120000, 'x'), "PAD6=" + std::string(120000, 'x'),
                       "PAD7=" + std::string(120000, 'x'), "PAD8=" + std::string(120000, 'x'),
                       "PAD9=" + std::string(120000, 'x'), "CUDA_VISIBLE_DEVICES=1"});
  h["gpus"][0]["processes"] = {{{"pid", c.pid()}, {"used_memory_mib", 100}}};
  h["gpus"][1]["processes"] = json::array();
  CliRun cut = gpumap_here({"ps", "--json", "--simulate", write_temp_file("cut-env.json", h.dump())});
  ASSERT_EQ(cut.code, 0) << cut.err;
  json p = json::parse(cut.out)["processes"][0];
  EXPECT_TRUE(p["environ_truncated"].get<bool>()) << p.dump();
  EXPECT_FALSE(p["command_truncated"].get<bool>());
  // The table says it too: "unset" there may be a variable past the cut.
  CliRun cut_table = gpumap_here({"ps", "--wide", "--simulate", write_temp_file("cut-env.json", h.dump())});
  EXPECT_NE(cut_table.out.find("unset? (environment cut)"), std::string::npos) << cut_table.out;
  EXPECT_NE(cut_table.out.find("cuda:0?"), std::string::npos) << cut_table.out;
}

TEST(CliFiles, AFaultNamingAnUnknownCallIsRefused) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["faults"] = {{{"call", "nvmlDeviceGetUUID"}, {"error", "NVML_ERROR_UNKNOWN"}},
                 {{"call", "nvmlDeviceGetUuid"}, {"error", "NVML_ERROR_UNKNOWN"}}};
  std::string host = write_temp_file("typo.json", h.dump());
  CliRun r = gpumap_here({"list", "--simulate", host});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(host), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("faults[1].call `nvmlDeviceGetUuid` is not a call"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpumap::testing
