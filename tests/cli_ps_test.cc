// Black-box tests of `gpumap ps`: real child processes with chosen environments, listed in a
// simulated host's per-GPU process lists, joined with this machine's /proc (or a fixture).  What
// needs a process stays here (exit codes, options, another user, PID namespaces, --watch and
// SIGINT, fixes pasted into bash); what ps answers for given processes is src/session/ps_test.cc's
// (PsAnswer.*, a fixture /proc on FakeSession).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

const char* kU1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

/// h200x2 with these processes on GPU 0 and GPU 1, 256 MiB each unless `mib` says ((gpu, pid) -> MiB).
std::string host_with(const std::vector<int>& gpu0, const std::vector<int>& gpu1,
                      const std::map<std::pair<int, int>, int>& mib = {}) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  for (int g = 0; g < 2; ++g) {
    json list = json::array();
    for (int pid : g ? gpu1 : gpu0) {
      auto m = mib.find({g, pid});
      list.push_back({{"pid", pid}, {"used_memory_mib", m == mib.end() ? 256 : m->second}});
    }
    h["gpus"][g]["processes"] = list;
  }
  return write_temp_file("ps-host.json", h.dump());
}

json ps_json(const std::string& host, const std::vector<std::string>& env = {}) {
  CliRun r = gpumap_here({"ps", "--json", "--simulate", host}, env);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

const json* row(const json& j, int pid, int gpu) {
  for (const json& p : j["processes"])
    if (p["pid"] == pid && p["nvml_index"] == gpu) return &p;
  ADD_FAILURE() << "no row for pid " << pid << " on GPU " << gpu << ": " << j.dump();
  static const json empty = json::object();
  return &empty;
}

bool has_finding(const json& p, const std::string& id, const std::string& sev) {
  for (const json& f : p["findings"])
    if (f["id"] == id && f["severity"] == sev && !f["message"].get<std::string>().empty() && f.contains("fix"))
      return true;
  return false;
}

size_t count_finding(const json& j, int pid, const std::string& id) {
  size_t n = 0;
  for (const json& p : j["processes"])
    if (p["pid"] == pid)
      for (const json& f : p["findings"]) n += f["id"] == id;
  return n;
}

// Four ranks of one job on one GPU (issue 22 point 10): one ranks-share-gpu and one gpu-shared for
// the GPU, listing the four pids, each row referring to them; and every fix of every ps finding
// (processes' and the GPU's) is one line bash accepts, prose going to the note.
TEST(CliPs, FourRanksOnOneGpuAreOneFindingAndEveryFixPastes) {
  std::vector<std::unique_ptr<Sleeper>> ranks;
  std::vector<int> gpu0;
  for (int i = 0; i < 4; ++i) {
    ranks.push_back(std::make_unique<Sleeper>(
        std::vector<std::string>{"LOCAL_RANK=" + std::to_string(i), "TORCHELASTIC_RUN_ID=four", "LOCAL_WORLD_SIZE=4"}));
    gpu0.push_back(ranks.back()->pid());
  }
  // Beside them, the other traps of docs/ps.md with a fix or a note.
  Sleeper bad({"CUDA_DEVICE_ORDER=pci_bus_id"}), outside({"CUDA_VISIBLE_DEVICES=0"}), swapped({"CUDA_VISIBLE_DEVICES=1,0"}),
      unset({"HOME=/"});
  std::string host = host_with(gpu0, {bad.pid(), outside.pid(), swapped.pid(), unset.pid()});
  json j = ps_json(host);
  size_t share = 0, shared = 0;
  for (const json& f : j["findings"]) {
    if (f["id"] == "ranks-share-gpu") {
      ++share;
      EXPECT_EQ(f["nvml_index"], 0);
      EXPECT_EQ(f["pids"], json(gpu0)) << f.dump();
      for (int pid : gpu0) EXPECT_NE(f["message"].get<std::string>().find(std::to_string(pid) + " (LOCAL_RANK="), std::string::npos);
    }
    shared += f["id"] == "gpu-shared";
  }
  EXPECT_EQ(share, 1u) << j["findings"].dump();
  size_t unpinned = 0;  // the four ranks and `unset` see every GPU: once per GPU
  for (const json& f : j["findings"]) unpinned += f["id"] == "no-visibility-shared-host";
  EXPECT_EQ(unpinned, 2u) << j["findings"].dump();
  EXPECT_EQ(shared, 2u) << "one per GPU: " << j["findings"].dump();
  for (int pid : gpu0) {
    const json& r = *row(j, pid, 0);
    EXPECT_EQ(count_finding(j, pid, "ranks-share-gpu"), 0u);
    std::set<std::string> refs;
    for (const json& k : r["gpu_findings"]) refs.insert(j["findings"][k.get<size_t>()]["id"].get<std::string>());
    EXPECT_EQ(refs, (std::set<std::string>{"ranks-share-gpu", "gpu-shared", "no-visibility-shared-host"})) << r.dump();
  }
  std::vector<json> all(j["findings"].begin(), j["findings"].end());
  for (const json& p : j["processes"]) all.insert(all.end(), p["findings"].begin(), p["findings"].end());
  std::set<std::string> ids;
  for (const json& f : all) {
    ids.insert(f["id"]);
    if (f.contains("also"))  // folded into this cause (one finding per cause): still seen
      for (const json& a : f["also"]) ids.insert(a["id"].get<std::string>());
    std::string fix = f["fix"], err;
    if (fix.empty()) continue;
    EXPECT_EQ(fix.find('\n'), std::string::npos) << f.dump();
    EXPECT_TRUE(bash_accepts(fix, err)) << f["id"] << ": bash -n refuses `" << fix << "`: " << err;
  }
  for (const char* id : {"ranks-share-gpu", "gpu-shared", "device-order-breaks-cuda", "outside-visible-set",
                         "cuda-number-differs", "no-visibility-shared-host", "rank-on-wrong-gpu"})
    EXPECT_EQ(ids.count(id), 1u) << id << " not seen: the test no longer covers it";
  // The text: the GPU's finding once, naming the pids.
  CliRun t = gpumap_here({"ps", "--wide", "--simulate", host});
  size_t lines = 0;
  for (size_t at = t.out.find("ranks-share-gpu"); at != std::string::npos; at = t.out.find("ranks-share-gpu", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << t.out;
  EXPECT_NE(t.out.find("ranks-share-gpu (GPU 0, pids " + std::to_string(gpu0[0]) + ", "), std::string::npos) << t.out;
}

TEST(CliPs, FiltersHideInfoAndFailOn) {
  Sleeper a({"CUDA_VISIBLE_DEVICES=1,0"}), b({"HOME=/"}), bad({"CUDA_DEVICE_ORDER=pci_bus_id"});
  std::string host = host_with({a.pid(), b.pid()}, {bad.pid()});
  // --gpu and --pid keep only the matching rows, in JSON and text alike.
  CliRun g = gpumap_here({"ps", "--json", "--gpu", kU1, "--simulate", host});
  ASSERT_EQ(g.code, 0) << g.err;
  json j = json::parse(g.out);
  ASSERT_EQ(j["processes"].size(), 1u) << g.out;
  EXPECT_EQ(j["processes"][0]["pid"], bad.pid());
  CliRun p = gpumap_here({"ps", "--wide", "--pid", std::to_string(a.pid()) + "," + std::to_string(bad.pid()), "--simulate", host});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out.find(" " + std::to_string(b.pid()) + " "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find(std::to_string(a.pid())), std::string::npos) << p.out;
  // Info findings: counted in text, shown with --all, always in JSON.
  CliRun t = gpumap_here({"ps", "--wide", "--simulate", host});
  EXPECT_EQ(t.code, 0) << "an error finding (bad's) fails only with --fail-on\n" << t.err;
  EXPECT_EQ(t.out.find("[info]"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("info findings hidden: gpumap ps --all"), std::string::npos) << t.out;
  CliRun all = gpumap_here({"ps", "--wide", "--all", "--simulate", host});
  EXPECT_NE(all.out.find("[info] cuda-number-differs"), std::string::npos) << all.out;
  // --fail-on: the error of `bad` fails; filtered away, it does not.
  EXPECT_EQ(gpumap_here({"ps", "--fail-on", "error", "--simulate", host}).code, 7);
  EXPECT_EQ(gpumap_here({"ps", "--fail-on", "warning", "--gpu", "0", "--simulate", host}).code, 0);
  EXPECT_EQ(gpumap_here({"ps", "--fail-on", "error", "--user", "no-such-user-31", "--simulate", host}).code, 0);
  // Bad values: exit 2 naming them.
  for (std::vector<std::string> bad_args : {std::vector<std::string>{"--gpu", "7"}, {"--pid", "12x"}, {"--fail-on", "info"},
                                            {"--user", ""}, {"--job", ""}}) {
    std::vector<std::string> argv{"ps", "--simulate", host};
    argv.insert(argv.end(), bad_args.begin(), bad_args.end());
    CliRun r = gpumap_here(argv);
    EXPECT_EQ(r.code, 2) << bad_args[0];
    EXPECT_NE(r.err.find(bad_args[0] == "--gpu" ? "GPU `7`" : bad_args[0]), std::string::npos) << r.err;
  }
}

// `ps --pid N`: that one process explained (its variables, its own cuda:N map, every finding with
// its fix, info ones too); two processes keep the plain list; -v is --all.
TEST(CliPs, PidExplainsThatOneProcess) {
  Sleeper a({"CUDA_VISIBLE_DEVICES=1,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}), b({"HOME=/"});
  std::string host = host_with({a.pid(), b.pid()}, {a.pid()});
  CliRun r = gpumap_here({"ps", "--wide", "--pid", std::to_string(a.pid()), "--simulate", host});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string pid = std::to_string(a.pid());
  EXPECT_NE(r.out.find("PID " + pid), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU 0 " + std::string("GPU-")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("it calls it cuda:1"), std::string::npos) << r.out;  // GPU 0 is its cuda:1
  EXPECT_NE(r.out.find("it calls it cuda:0"), std::string::npos) << r.out;  // GPU 1 its cuda:0
  EXPECT_NE(r.out.find("Variables it started with\n  CUDA_VISIBLE_DEVICES=1,0\n  CUDA_DEVICE_ORDER=PCI_BUS_ID\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cuda:0 -> nvidia-smi 1  " + std::string(kU1)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cuda:1 -> nvidia-smi 0  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[info] cuda-number-differs (GPU 0)"), std::string::npos) << "info shown too:\n" << r.out;
  EXPECT_EQ(r.out.find("\nFindings:\n"), std::string::npos) << "the detail replaces the list:\n" << r.out;
  EXPECT_EQ(r.out.find(" " + std::to_string(b.pid()) + " "), std::string::npos) << r.out;
  // Two processes: the list as before.
  CliRun two = gpumap_here({"ps", "--wide", "--pid", pid + "," + std::to_string(b.pid()), "--simulate", host});
  EXPECT_EQ(two.out.find("Variables it started with"), std::string::npos) << two.out;
  // -v is --all.
  CliRun v = gpumap_here({"ps", "--wide", "-v", "--simulate", host});
  CliRun all = gpumap_here({"ps", "--wide", "--all", "--simulate", host});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_EQ(v.out, all.out);
  EXPECT_NE(v.out.find("[info] cuda-number-differs"), std::string::npos) << v.out;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(CliPs, FixtureProcRootWithUnreadableEnvironAndContainerPid) {
  std::string root = temp_dir("procroot");
  mkdir((root + "/4242").c_str(), 0755);  // a process in a container: host pid 4242, pid 7 inside
  write(root + "/4242/status", "Name:\tpython3\nUid:\t0\t0\t0\t0\nNSpid:\t4242\t7\n");
  write(root + "/4242/cmdline", std::string("python3\0train.py\0", 17));
  write(root + "/4242/environ", std::string("CUDA_VISIBLE_DEVICES=0\0NVIDIA_VISIBLE_DEVICES=1\0", 48));
  mkdir((root + "/4343").c_str(), 0755);  // another user's process whose environ cannot be read
  write(root + "/4343/status", "Name:\tpython3\nUid:\t0\t0\t0\t0\nNSpid:\t4343\n");
  write(root + "/4343/cmdline", std::string("python3\0serve.py\0", 17));
  mkdir((root + "/4343/environ").c_str(), 0755);
  mkdir((root + "/4444").c_str(), 0755);  // a command line that needs escaping in JSON
  write(root + "/4444/status", "Name:\tx\nUid:\t0\t0\t0\t0\n");
  write(root + "/4444/cmdline", std::string("say\0\"h\\i\"\0caf\xc3\xa9\0\t", 18));
  write(root + "/4444/environ", "");
  std::string host = host_with({4343, 4444}, {4242});
  json j = ps_json(host, {"GPUMAP_PROC_ROOT=" + root});
  EXPECT_EQ((*row(j, 4444, 0))["command"], "say \"h\\i\" caf\xc3\xa9 \t");
  EXPECT_EQ(j["proc_root"], root);
  const json& c = *row(j, 4242, 1);
  EXPECT_EQ(c["nspid"], json::array({4242, 7}));
  EXPECT_EQ(c["command"], "python3 train.py");
  // Inside its container (NVIDIA_VISIBLE_DEVICES=1: host GPU 1 alone, numbered 0), CUDA_VISIBLE_DEVICES=0
  // is host GPU 1: the GPU it holds, as its cuda:0; judged against the host's numbers it would
  // look outside its visible set.
  EXPECT_EQ(c["cuda_ordinal"], 0) << c.dump();
  EXPECT_EQ(c["container_gpus"], json::array({"GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a"}));
  EXPECT_FALSE(has_finding(c, "outside-visible-set", "warning")) << c.dump();
  ASSERT_TRUE(has_finding(c, "cuda-number-differs", "info")) << c.dump();
  for (const json& f : c["findings"])
    if (f["id"] == "cuda-number-differs") {
      EXPECT_NE(f["message"].get<std::string>().find("inside its container of 1 GPU, numbered from 0"), std::string::npos);
      // The mapping it names is the container's: pasted, `map` shows cuda:0 = nvidia-smi GPU 1.
      std::string note = f["note"];
      std::string cmd = note.substr(note.find("gpumap map ") + 11);
      EXPECT_EQ(cmd, "--env NVIDIA_VISIBLE_DEVICES=GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a --env CUDA_VISIBLE_DEVICES=0 "
                     "--unset CUDA_DEVICE_ORDER");
      std::vector<std::string> args = {"map", "--json", "--simulate", host};
      std::istringstream words(cmd);
      for (std::string w; words >> w;) args.push_back(w);
      CliRun m = gpumap_here(args);
      ASSERT_EQ(m.code, 0) << m.err;
      json mj = json::parse(m.out);
      EXPECT_EQ(mj["cuda"]["devices"][0]["uuid"], "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a") << mj.dump();
      EXPECT_EQ(mj["cuda"]["devices"].size(), 1u);
    }
  const json& d = *row(j, 4343, 0);
  EXPECT_EQ(d["state"], "running");
  EXPECT_EQ(d["cuda_visible_devices"], nullptr);
  EXPECT_EQ(d["cuda_ordinal"], nullptr);
  EXPECT_NE(d["environ"], "ok");
  EXPECT_TRUE(has_finding(d, "environ-unreadable", "info"));
  CliRun t = gpumap_here({"ps", "--simulate", host}, {"GPUMAP_PROC_ROOT=" + root});
  EXPECT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("?"), std::string::npos) << t.out;
  // The table marks the cuda:N counted inside the container (the host's cuda:0 is another GPU) and
  // says so once under it; the host processes' cells stay plain.
  EXPECT_NE(t.out.find("cuda:0*"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("cuda:N*: counted inside the process's container, which numbers only its own GPUs from 0 "
                       "(its map: gpumap ps --pid 4242)"),
            std::string::npos)
      << t.out;
  EXPECT_EQ(t.out.find("cuda:N*"), t.out.rfind("cuda:N*")) << "said once\n" << t.out;
  CliRun plain = gpumap_here({"ps", "--simulate", host_with({4444}, {})}, {"GPUMAP_PROC_ROOT=" + root});
  EXPECT_EQ(plain.out.find('*'), std::string::npos) << "no container, no mark\n" << plain.out;
}

TEST(CliPs, FixtureChildNamespaceCannotNameHostPids) {
  std::string root = temp_dir("procns");
  mkdir((root + "/1").c_str(), 0755);
  mkdir((root + "/1/ns").c_str(), 0755);
  ASSERT_EQ(symlink("pid:[4026532999]", (root + "/1/ns/pid").c_str()), 0);
  mkdir((root + "/4242").c_str(), 0755);  // a local process that merely has the same number
  write(root + "/4242/status", "Name:\tbash\nUid:\t0\t0\t0\t0\nNSpid:\t4242\n");
  std::string host = host_with({4242}, {});
  json j = ps_json(host, {"GPUMAP_PROC_ROOT=" + root, "GPUMAP_NVML_PID_NS=pid:[4026531836]"});
  EXPECT_FALSE(j["pid_namespace"]["joinable"].get<bool>());
  const json& r = *row(j, 4242, 0);
  EXPECT_EQ(r["state"], "not-visible");
  EXPECT_EQ(r["command"], nullptr);
  EXPECT_TRUE(has_finding(r, "process-not-visible", "warning"));
  CliRun t = gpumap_here({"ps", "--simulate", host},
                    {"GPUMAP_PROC_ROOT=" + root, "GPUMAP_NVML_PID_NS=pid:[4026531836]"});
  EXPECT_NE(t.out.find("not visible from here"), std::string::npos) << t.out;
}

TEST(CliPs, AnotherUsersEnvironIsUnknownNotACrash) {
  std::string why;
  if (!can_run_as_nobody(why)) GTEST_SKIP() << why;
  Sleeper mine({"CUDA_VISIBLE_DEVICES=1"});  // root's process; gpumap runs as nobody below
  std::string dir = temp_dir("deny");
  chmod(dir.c_str(), 0755);
  std::string host = dir + "/host.json";
  {
    std::ifstream in(host_path("h200x2"));
    json h = json::parse(in);
    h["gpus"][1]["processes"] = json::array({{{"pid", mine.pid()}, {"used_memory_mib", 1}}});
    std::ofstream(host) << h.dump();
  }
  chmod(host.c_str(), 0644);
  // A copy nobody can read wherever the checkout is (a 0700 clone too).
  ProcResult r = run_capture({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              gpumap_for_other_users(), "ps", "--json", "--simulate", host},
                             {"PATH=/usr/bin:/bin", "GPUMAP_CACHE_DIR=/nonexistent/gpumap-cache"}, 30000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  const json& p = *row(j, mine.pid(), 1);
  EXPECT_EQ(p["state"], "running");
  EXPECT_EQ(p["environ"], "denied");
  EXPECT_EQ(p["cuda_visible_devices"], nullptr);
  EXPECT_EQ(p["cuda_ordinal"], nullptr);
  EXPECT_EQ(p["command"], "sleep 30");
  EXPECT_TRUE(has_finding(p, "environ-unreadable", "info"));
  // The one thing to do is said where the ? is seen (issue 43 item 3), not only in the info finding
  // the table hides: a field of the document, and a line under the table.
  EXPECT_EQ(j["needs_root"]["pids"], json::array({mine.pid()})) << r.out;
  EXPECT_EQ(j["needs_root"]["command"], "sudo gpumap ps");
  ProcResult t = run_capture({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              gpumap_for_other_users(), "ps", "--simulate", host},
                             {"PATH=/usr/bin:/bin", "GPUMAP_CACHE_DIR=/nonexistent/gpumap-cache"}, 30000);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("?: another user's environment, which this user cannot read: see it with sudo gpumap ps (pid " +
                       std::to_string(mine.pid()) + ")"),
            std::string::npos)
      << t.out;
}

/// Runs `unshare ARGS... gpumap ps --json --simulate HOST` with env; nullopt when unshare cannot run here.
std::optional<json> in_unshare(const std::vector<std::string>& flags, const std::string& host,
                               const std::vector<std::string>& env) {
  if (access("/usr/bin/unshare", X_OK) != 0) return std::nullopt;
  std::vector<std::string> argv = {"/usr/bin/unshare"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const char* a : {GPUMAP_BINARY, "ps", "--json", "--simulate"}) argv.push_back(a);
  argv.push_back(host);
  std::vector<std::string> e = {"PATH=/usr/bin:/bin", "HOME=" + temp_dir("home"), "GPUMAP_CACHE_DIR=" + temp_dir("c")};
  e.insert(e.end(), env.begin(), env.end());
  ProcResult r = run_capture(argv, e, 30000);
  if (r.exit_code != 0 || r.out.empty()) return std::nullopt;
  return json::parse(r.out);
}

std::string my_pid_ns() {
  char buf[128];
  ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST(CliPs, RealPidNamespaceWithItsOwnProc) {
  Sleeper s({"CUDA_VISIBLE_DEVICES=0"});
  std::string host = host_with({s.pid()}, {});
  // The host file's pids are ours; gpumap runs in a new PID namespace with its own /proc.
  auto j = in_unshare({"--pid", "--fork", "--mount-proc"}, host, {"GPUMAP_NVML_PID_NS=" + my_pid_ns()});
  if (!j) GTEST_SKIP() << "unshare --pid --mount-proc is not permitted here";
  EXPECT_FALSE((*j)["pid_namespace"]["joinable"].get<bool>()) << j->dump();
  EXPECT_EQ((*row(*j, s.pid(), 0))["state"], "not-visible");
}

TEST(CliPs, RealPidNamespaceSeeingTheParentProc) {
  Sleeper s({"CUDA_VISIBLE_DEVICES=0"});
  std::string host = host_with({s.pid()}, {});
  // No new /proc: gpumap sits one namespace down but reads ours, so the join works; the sleeper
  // has no pid in gpumap's namespace.
  auto j = in_unshare({"--pid", "--fork"}, host, {"GPUMAP_NVML_PID_NS=" + my_pid_ns()});
  if (!j) GTEST_SKIP() << "unshare --pid is not permitted here";
  EXPECT_TRUE((*j)["pid_namespace"]["joinable"].get<bool>()) << j->dump();
  const json& r = *row(*j, s.pid(), 0);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["cuda_ordinal"], 0);
  EXPECT_EQ(r["local_pid"], nullptr);
}

TEST(CliPs, WatchPrintsOneJsonDocumentPerFrameUntilSigint) {
  std::string host = host_with({}, {});
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t p = fork();
  if (p == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    std::string sim = "GPUMAP_CACHE_DIR=" + temp_dir("wc");
    char* env[] = {const_cast<char*>("PATH=/usr/bin:/bin"), sim.data(), nullptr};
    std::string h = host;
    char* argv[] = {const_cast<char*>(GPUMAP_BINARY), const_cast<char*>("ps"), const_cast<char*>("--json"),
                    const_cast<char*>("--watch"), const_cast<char*>("0.1"), const_cast<char*>("--simulate"),
                    h.data(), nullptr};
    execve(GPUMAP_BINARY, argv, env);
    _exit(127);
  }
  close(fds[1]);
  // Wait for two frames (not a fixed time: under ASan on a busy machine start-up is slow), then
  // interrupt, as a user would, and read what is left.
  std::string out;
  char buf[4096];
  ssize_t n;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::count(out.begin(), out.end(), '\n') < 2 && std::chrono::steady_clock::now() < deadline &&
         (n = read(fds[0], buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  kill(p, SIGINT);
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int st = 0;
  waitpid(p, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  size_t lines = 0, pos = 0;
  while (pos < out.size()) {
    size_t e = out.find('\n', pos);
    ASSERT_NE(e, std::string::npos) << out;
    json j = json::parse(out.substr(pos, e - pos));
    EXPECT_TRUE(j.contains("processes"));
    ++lines;
    pos = e + 1;
  }
  EXPECT_GE(lines, 2u) << out;
}

// Issue 43: three torchrun ranks of one job all on GPU 0 (each rank's own GPU is another, named
// by UUID) were three near-identical rank-on-wrong-gpu paragraphs.  Issue 52 item 7: and a
// ranks-share-gpu with the same note.  One cause, one finding: ranks-share-gpu (an error now),
// each rank's rank-on-wrong-gpu a line of its evidence.
TEST(CliPs, RankOnWrongGpuIsOneFindingPerJob) {
  Sleeper r1({"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=t"});
  Sleeper r2({"LOCAL_RANK=2", "TORCHELASTIC_RUN_ID=t"});
  Sleeper r3({"LOCAL_RANK=3", "TORCHELASTIC_RUN_ID=t"});
  std::ifstream in(host_path("dgx8"));
  json h = json::parse(in);
  json list = json::array();
  for (int pid : {r1.pid(), r2.pid(), r3.pid()}) list.push_back({{"pid", pid}, {"used_memory_mib", 256}});
  h["gpus"][0]["processes"] = list;
  std::string host = write_temp_file("ps-ranks.json", h.dump());
  json j = ps_json(host);
  for (int pid : {r1.pid(), r2.pid(), r3.pid()}) EXPECT_EQ(count_finding(j, pid, "rank-on-wrong-gpu"), 0u) << pid;
  size_t causes = 0;
  for (const json& f : j["findings"])
    if (f["id"] == "ranks-share-gpu") {
      ++causes;
      EXPECT_EQ(f["severity"], "error") << f.dump();
      ASSERT_TRUE(f.contains("also")) << f.dump();
      EXPECT_EQ(f["also"].size(), 3u) << f.dump();
      for (const json& a : f["also"]) EXPECT_EQ(a["id"], "rank-on-wrong-gpu") << f.dump();
    }
  EXPECT_EQ(causes, 1u) << j["findings"].dump();
  CliRun t = gpumap_here({"ps", "--wide", "--simulate", host});
  EXPECT_EQ(t.code, 0) << t.err;
  size_t said = 0;
  for (size_t at = t.out.find("] ranks-share-gpu"); at != std::string::npos; at = t.out.find("] ranks-share-gpu", at + 1)) ++said;
  EXPECT_EQ(said, 1u) << t.out;
  EXPECT_EQ(t.out.find("] rank-on-wrong-gpu"), std::string::npos) << t.out;
  size_t evidence = 0;
  for (size_t at = t.out.find("also rank-on-wrong-gpu"); at != std::string::npos; at = t.out.find("also rank-on-wrong-gpu", at + 1))
    ++evidence;
  EXPECT_EQ(evidence, 3u) << t.out;
}

}  // namespace
}  // namespace gpumap::testing
