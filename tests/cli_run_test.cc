// Black-box tests of `gpumap pick` and `gpumap run` on simulated hosts: leases, waiting, exit
// codes, signals, argv, and the environment the command sees.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* kGpu0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // hosts/h200x2.json
const char* kGpu1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// `gpumap run --simulate h200x2 OPTS -- CMD` with its own lease folder.
CliRun run_on(const std::string& locks, const std::vector<std::string>& opts, const std::vector<std::string>& cmd,
              const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = with({"run", "--simulate", "h200x2"}, opts);
  args.push_back("--");
  return gpumap(with(args, cmd), with({"GPUMAP_LOCK_DIR=" + locks}, env));
}

/// Runs a shell script with $G = the gpumap binary (quote it: the checkout path may hold spaces) and $L = the lease folder.
ProcResult script(const std::string& locks, const std::string& text) {
  return run_capture({"/bin/sh", "-c", text},
                     {"PATH=/usr/bin:/bin", "G=" GPUMAP_BINARY, "L=" + locks, "HOME=" + temp_dir("home"),
                      "GPUMAP_CACHE_DIR=" + temp_dir("cache")},
                     60000);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(CliPick, FormatsAndJson) {
  std::string locks = temp_dir("locks");
  CliRun env = gpumap({"pick", "--simulate", "h200x2", "--format", "env"}, {"GPUMAP_LOCK_DIR=" + locks});
  ASSERT_EQ(env.code, 0) << env.err;
  EXPECT_EQ(env.out, "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=0\n");
  CliRun env_uuid = gpumap({"pick", "--simulate", "h200x2", "--format", "env", "--cvd-form", "uuid"},
                           {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(env_uuid.out, std::string("export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=") + kGpu0 + "\n");
  // Indices are right only with PCI order: the index format carries it.
  CliRun idx = gpumap({"pick", "--simulate", "h200x2", "--format", "index", "--gpus", "2"}, {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(idx.out, "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1\n");
  EXPECT_EQ(gpumap({"pick", "--simulate", "h200x2", "--cvd-form", "indices"}).code, 2);
  CliRun uuid = gpumap({"pick", "--simulate", "h200x2", "--format", "uuid", "--exclude", "GPU-ef61"},
                       {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(uuid.out, std::string(kGpu1) + "\n");
  CliRun j = gpumap({"pick", "--simulate", host_path("pick4"), "--gpus", "2", "--json"}, {"GPUMAP_LOCK_DIR=" + locks});
  ASSERT_EQ(j.code, 0) << j.err;
  json p = json::parse(j.out);
  ASSERT_EQ(p["devices"].size(), 2u);
  EXPECT_EQ(p["devices"][0]["nvml_index"], 2);  // the idle NVLink pair on CPU 1 (GPU 1 runs a process)
  EXPECT_EQ(p["devices"][1]["nvml_index"], 3);
  EXPECT_EQ(p["exports"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
  EXPECT_EQ(p["passed_over"][0]["nvml_index"], 1);
  CliRun bad = gpumap({"pick", "--simulate", "h200x2", "--format", "yaml"});
  EXPECT_EQ(bad.code, 2);
}

TEST(CliPick, OnlyGpusThisProcessCanSee) {
  std::string locks = temp_dir("locks");
  CliRun r = gpumap({"pick", "--simulate", "h200x2", "--format", "index"},
                    {"GPUMAP_LOCK_DIR=" + locks, "CUDA_VISIBLE_DEVICES=1"});
  EXPECT_EQ(r.out, "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1\n") << r.err;
  CliRun two = gpumap({"pick", "--simulate", "h200x2", "--gpus", "2"}, {"GPUMAP_LOCK_DIR=" + locks, "CUDA_VISIBLE_DEVICES=1"});
  EXPECT_EQ(two.code, 6);
  EXPECT_NE(two.err.find("can see only 1"), std::string::npos) << two.err;
  CliRun hidden = gpumap({"pick", "--simulate", "h200x2", "--include", "0"},
                         {"GPUMAP_LOCK_DIR=" + locks, "CUDA_VISIBLE_DEVICES=1"});
  EXPECT_EQ(hidden.code, 2);
  EXPECT_NE(hidden.err.find("not visible"), std::string::npos) << hidden.err;
}

TEST(CliRun, ChildSeesPciOrderIndexOrUuidOnRequestAndArgvUnchanged) {
  std::string locks = temp_dir("locks");
  CliRun r = run_on(locks, {}, {"sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER\"; printf '[%s]' \"$@\"", "sh",
                                "a b", "it's", "\"q\"", "", "$HOME", "*"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0|PCI_BUS_ID\n[a b][it's][\"q\"][][$HOME][*]");
  CliRun u = run_on(locks, {"--cvd-form", "uuid"}, {"sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER\""});
  EXPECT_EQ(u.out, std::string(kGpu0) + "|PCI_BUS_ID\n") << u.err;
  EXPECT_NE(r.err.find(std::string("cuda:0 -> GPU 0  ") + kGpu0), std::string::npos) << r.err;
}

TEST(CliRun, ExitCodeAndSignalComeBackAndLeasesFreeAtOnce) {
  std::string locks = temp_dir("locks");
  EXPECT_EQ(run_on(locks, {"--include", "0"}, {"sh", "-c", "exit 7"}).code, 7);
  EXPECT_EQ(run_on(locks, {"--include", "0"}, {"sh", "-c", "kill -TERM $$"}).code, 143);
  auto t = Clock::now();
  CliRun next = run_on(locks, {"--include", "0"}, {"true"});  // no --wait: the lease must be free already
  EXPECT_EQ(next.code, 0) << next.err;
  EXPECT_LT(seconds_since(t), 5.0);
  CliRun missing = run_on(locks, {}, {"gpumap-no-such-program"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.err.find("gpumap-no-such-program"), std::string::npos);
}

TEST(CliRun, ManyConcurrentRunsNeverShareAGpu) {
  std::string locks = temp_dir("locks");
  std::string logs = temp_dir("logs");
  const int n = 6;
  std::vector<std::thread> threads;
  std::vector<int> codes(n, -1);
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      std::string f = logs + "/" + std::to_string(i);
      CliRun r = run_on(locks, {"--gpus", "1", "--wait", "30"},
                        {"sh", "-c",
                         "echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER $(date +%s%N)\" > " + f +
                             "; sleep 0.3; echo \"$(date +%s%N)\" >> " + f});
      codes[static_cast<size_t>(i)] = r.code;
    });
  for (auto& t : threads) t.join();
  struct Span {
    std::string uuid;
    long long start, end;
  };
  std::vector<Span> spans;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(codes[static_cast<size_t>(i)], 0);
    std::istringstream in(slurp(logs + "/" + std::to_string(i)));
    Span s;
    std::string order;
    in >> s.uuid >> order >> s.start >> s.end;
    EXPECT_TRUE(s.uuid == "0" || s.uuid == "1") << s.uuid;  // PCI-order indices (h200x2: 0 and 1)
    EXPECT_EQ(order, "PCI_BUS_ID");
    spans.push_back(s);
  }
  for (size_t a = 0; a < spans.size(); ++a)
    for (size_t b = a + 1; b < spans.size(); ++b)
      if (spans[a].uuid == spans[b].uuid) {
        EXPECT_TRUE(spans[a].end <= spans[b].start || spans[b].end <= spans[a].start)
            << "runs " << a << " and " << b << " held " << spans[a].uuid << " at the same time";
      }
}

TEST(CliRun, BusyGpuFailsAtOnceOrIsWaitedFor) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks,
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c "
                        "'touch $L/started; while [ ! -e $L/release ]; do sleep 0.02; done' &\n"
                        "while [ ! -e $L/started ]; do sleep 0.02; done\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" list --simulate h200x2 | grep -c 'pid .* since'\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- true; echo now=$?\n"
                        "(sleep 0.3; touch $L/release) &\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 --wait 20 -- true; echo waited=$?\n"
                        "wait\n");
  EXPECT_NE(p.out.find("1\n"), std::string::npos) << p.out << p.err;  // list shows the holder
  EXPECT_NE(p.out.find("now=6"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.err.find("leased by pid"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("--wait"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("waited=0"), std::string::npos) << p.out << p.err;
}

TEST(CliRun, TooManyGpusFailsCleanlyEvenWithWait) {
  std::string locks = temp_dir("locks");
  auto t = Clock::now();
  CliRun r = run_on(locks, {"--gpus", "3", "--wait", "30"}, {"true"});
  EXPECT_EQ(r.code, 6);
  EXPECT_NE(r.err.find("can see only 2"), std::string::npos) << r.err;
  EXPECT_LT(seconds_since(t), 10.0);
  EXPECT_EQ(run_on(locks, {"--gpus", "0"}, {"true"}).code, 2);
  EXPECT_EQ(run_on(locks, {"--gpus", "two"}, {"true"}).code, 2);
  EXPECT_EQ(gpumap({"run", "--simulate", "h200x2"}, {"GPUMAP_LOCK_DIR=" + locks}).code, 2);  // no command
}

TEST(CliRun, SigtermToGpumapIsForwardedAndLeaseFreed) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks,
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c "
                        "'trap \"echo got-term; exit 3\" TERM; touch $L/started; while :; do sleep 0.02; done' &\n"
                        "g=$!\n"
                        "while [ ! -e $L/started ]; do sleep 0.02; done\n"
                        "kill -TERM $g; wait $g; echo rc=$?\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- true; echo next=$?\n");
  EXPECT_NE(p.out.find("got-term"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("rc=3"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("next=0"), std::string::npos) << p.out << p.err;
}

TEST(CliRun, LeaseFreedWhenTheChildIsKilled) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks,
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c 'echo $$ > $L/pid; exec sleep 30' &\n"
                        "g=$!\n"
                        "while [ ! -s $L/pid ]; do sleep 0.02; done\n"
                        "kill -KILL $(cat $L/pid); wait $g; echo rc=$?\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- true; echo next=$?\n");
  EXPECT_NE(p.out.find("rc=137"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("next=0"), std::string::npos) << p.out << p.err;
}

TEST(CliRun, CommandGetsSigtermWhenGpumapIsKilled) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks,
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c "
                        "'trap \"touch $L/term; exit 0\" TERM; touch $L/started; while :; do sleep 0.02; done' &\n"
                        "g=$!\n"
                        "while [ ! -e $L/started ]; do sleep 0.02; done\n"
                        "kill -KILL $g\n"
                        "for i in $(seq 100); do [ -e $L/term ] && break; sleep 0.02; done\n"
                        "[ -e $L/term ] && echo child-ended\n");
  EXPECT_NE(p.out.find("child-ended"), std::string::npos) << p.out << p.err;
}

// Shell functions for the job tests: alive PID (running, not a zombie) and until_free (the
// lease on GPU 0 comes free within 5 s; prints free=CODE).
const char* kJobShell =
    "alive() { s=$(cut -d' ' -f3 /proc/$1/stat 2>/dev/null); [ -n \"$s\" ] && [ \"$s\" != Z ]; }\n"
    "until_free() { GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 --wait 5 -- true; echo free=$?; }\n";

TEST(CliRun, LeaseOutlivesKilledGpumapWhileAnyJobProcessRuns) {
  // The `bash train.sh` pattern: the shell dies with gpumap (SIGTERM), its child keeps the GPU busy.
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks, std::string(kJobShell) +
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c "
                        "'sleep 30 & echo $! > $L/worker; echo $$ > $L/job; wait; true' &\n"
                        "g=$!\n"
                        "while [ ! -s $L/job ] || [ ! -s $L/worker ]; do sleep 0.02; done\n"
                        "kill -KILL $g; wait $g; echo gpumap=$?\n"
                        "for i in $(seq 100); do alive $(cat $L/job) || break; sleep 0.02; done\n"
                        "alive $(cat $L/job) || echo shell-ended\n"
                        "alive $(cat $L/worker) && echo worker-runs\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- true; echo while=$?\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" list --simulate h200x2 | grep -o 'job [0-9]* ([^)]*)'\n"
                        "echo jobpid=$(cat $L/job)\n"
                        "kill -KILL $(cat $L/worker)\n"
                        "until_free\n");
  EXPECT_NE(p.out.find("gpumap=137"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("shell-ended"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("worker-runs"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("while=6"), std::string::npos) << "the GPU was leased again while the job ran\n" << p.out << p.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(p.out, m, std::regex("jobpid=([0-9]+)"))) << p.out;
  EXPECT_NE(p.out.find("job " + m[1].str() + " ("), std::string::npos) << "list names the job\n" << p.out;
  EXPECT_NE(p.out.find("free=0"), std::string::npos) << p.out << p.err;
}

TEST(CliRun, LeaseOutlivesKilledGpumapWhenTheCommandIgnoresSigterm) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks, std::string(kJobShell) +
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c "
                        "'trap \"\" TERM; echo $$ > $L/job; while :; do sleep 0.05; done' &\n"
                        "g=$!\n"
                        "while [ ! -s $L/job ]; do sleep 0.02; done\n"
                        "kill -KILL $g; wait $g\n"
                        "sleep 0.3; alive $(cat $L/job) && echo job-runs\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- true; echo while=$?\n"
                        "kill -KILL -$(cat $L/job)\n"
                        "until_free\n");
  EXPECT_NE(p.out.find("job-runs"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("while=6"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("free=0"), std::string::npos) << p.out << p.err;
}

TEST(CliRun, SignalsReachTheWholeJob) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks, std::string(kJobShell) +
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c "
                        "'sleep 30 & echo $! > $L/worker; wait' &\n"
                        "g=$!\n"
                        "while [ ! -s $L/worker ]; do sleep 0.02; done\n"
                        "kill -TERM $g; wait $g; echo rc=$?\n"
                        "for i in $(seq 100); do alive $(cat $L/worker) || break; sleep 0.02; done\n"
                        "alive $(cat $L/worker) && echo worker-survived\n"
                        "until_free\n");
  EXPECT_NE(p.out.find("rc=143"), std::string::npos) << p.out << p.err;
  EXPECT_EQ(p.out.find("worker-survived"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.out.find("free=0"), std::string::npos) << p.out << p.err;
}

TEST(CliRun, LockHeldByAnotherProgramNamesNoStalePid) {
  std::string locks = temp_dir("locks");
  ProcResult p = script(locks,
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- sh -c 'echo $PPID > $L/old'\n"
                        "flock $L/" + std::string(kGpu0) + ".lock sh -c 'echo $$ > $L/holder; touch $L/locked; exec sleep 30' &\n"
                        "f=$!\n"
                        "while [ ! -e $L/locked ]; do sleep 0.02; done\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate h200x2 --include 0 -- true; echo busy=$?\n"
                        "GPUMAP_LOCK_DIR=$L \"$G\" list --simulate h200x2\n"
                        "kill $(cat $L/holder); wait\n");
  std::string old = slurp(locks + "/old");
  while (!old.empty() && old.back() == '\n') old.pop_back();
  ASSERT_FALSE(old.empty());
  EXPECT_NE(p.out.find("busy=6"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.err.find("no gpumap record"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("no gpumap record"), std::string::npos) << p.out;
  EXPECT_EQ(p.err.find("pid " + old), std::string::npos) << "names the dead earlier holder\n" << p.err;
  EXPECT_EQ(p.out.find("pid " + old), std::string::npos) << p.out;
}

TEST(CliRun, PlantedSymlinkInTheLeaseFolderIsRefused) {
  std::string locks = temp_dir("locks");
  std::string victim = temp_dir("victim") + "/file";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(symlink(victim.c_str(), (locks + "/" + kGpu0 + ".lock").c_str()), 0);
  CliRun pinned = run_on(locks, {"--include", "0"}, {"true"});
  EXPECT_EQ(pinned.code, 6);
  EXPECT_NE(pinned.err.find("symbolic link"), std::string::npos) << pinned.err;
  CliRun other = run_on(locks, {}, {"sh", "-c", "echo $CUDA_VISIBLE_DEVICES"});
  EXPECT_EQ(other.code, 0) << other.err;
  EXPECT_EQ(other.out, "1\n");  // GPU 1, as a PCI-order index
  EXPECT_EQ(slurp(victim), "precious\n");
  CliRun list = gpumap({"list", "--simulate", "h200x2"}, {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_NE(list.out.find("unsafe lock file"), std::string::npos) << list.out;
}

TEST(CliRun, LeasesWorkAcrossUsers) {
  std::string why;
  if (!can_run_as_nobody(why)) GTEST_SKIP() << why;
  // nobody runs a copy that it can read wherever the checkout is (a 0700 clone too).
  const std::string others_gpumap = gpumap_for_other_users();
  std::string base = temp_dir("xuser");
  chmod(base.c_str(), 0755);
  std::string host = base + "/host.json";
  std::string locks = base + "/leases";  // created by root's gpumap below: mode 1777
  {
    std::ifstream in(host_path("h200x2"));
    std::ofstream(host) << in.rdbuf();
  }
  chmod(host.c_str(), 0644);
  auto as_nobody = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", others_gpumap};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_capture(argv, {"PATH=/usr/bin:/bin", "GPUMAP_LOCK_DIR=" + locks, "GPUMAP_CACHE_DIR=/nonexistent/c"}, 30000);
  };
  ProcResult probe = as_nobody({"list", "--simulate", host});
  ASSERT_EQ(probe.exit_code, 0) << "gpumap as nobody: " << probe.err;

  // root takes GPU 0 once (creating the folder and a root-owned 0666 lock file), then holds it.
  ASSERT_EQ(gpumap({"run", "--simulate", host, "--include", "0", "--", "true"}, {"GPUMAP_LOCK_DIR=" + locks}).code, 0);
  struct stat st;
  ASSERT_EQ(stat(locks.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  ProcResult free0 = as_nobody({"run", "--simulate", host, "--include", "0", "--", "true"});
  EXPECT_EQ(free0.exit_code, 0) << free0.err;  // another user's 0666 lock file is lockable

  ProcResult held = script(locks,
                           "N='" + others_gpumap + "'\n"  // a temp dir's path: no quote in it
                           "GPUMAP_LOCK_DIR=$L \"$G\" run --simulate " + host +
                               " --include 0 -- sh -c 'touch $L/../started; sleep 0.5' &\n"
                               "while [ ! -e $L/../started ]; do sleep 0.02; done\n"
                               "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups env GPUMAP_LOCK_DIR=$L "
                               "GPUMAP_CACHE_DIR=/nonexistent/c \"$N\" run --simulate " + host +
                               " --include 0 -- true; echo nobody=$?\nwait\n");
  EXPECT_NE(held.out.find("nobody=6"), std::string::npos) << held.out << held.err;
  EXPECT_NE(held.err.find("leased by pid"), std::string::npos) << held.err;

  // A root-owned lock file that others cannot write blocks GPU 1 for them, with a message.
  std::string planted = locks + "/" + kGpu1 + ".lock";
  std::ofstream(planted) << "";
  chmod(planted.c_str(), 0644);
  ProcResult blocked = as_nobody({"run", "--simulate", host, "--include", "1", "--", "true"});
  EXPECT_EQ(blocked.exit_code, 6) << blocked.err;
  EXPECT_NE(blocked.err.find("not writable"), std::string::npos) << blocked.err;
}

/// This process's Cpus_allowed_list line of /proc/self/status (what a child inherits).
std::string own_cpus_line() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line + "\n";
  return "";
}

// Issue 43: `run`/`bind --simulate` pinned the real process to the simulated host's CPUs (another
// machine's).  Now they are shown, never applied: the child keeps this machine's affinity.
TEST(CliRun, ASimulatedHostsCpusAreShownNotApplied) {
  std::string locks = temp_dir("locks");
  CliRun r = gpumap({"run", "--simulate", host_path("pick4"), "--include", "2", "--", "grep", "Cpus_allowed_list", "/proc/self/status"},
                    {"GPUMAP_LOCK_DIR=" + locks});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, own_cpus_line());  // inherited as it was
  EXPECT_NE(r.err.find("not bound (simulated host: its GPUs' local CPUs 1 would be bound there; this machine's "
                       "affinity is left as it is)"),
            std::string::npos)
      << r.err;
  CliRun j = gpumap({"run", "--simulate", host_path("pick4"), "--include", "2", "--json", "--", "true"}, {"GPUMAP_LOCK_DIR=" + locks});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_TRUE(nlohmann::json::parse(j.err)["cpus"].is_null()) << j.err;  // stdout is the command's
}

// The real pinning, on the real driver's path: the same fake NVML loaded as the machine's own
// libnvidia-ml.so.1 (not --simulate), and the GPU's local CPUs from sysfs (a fixture saying CPU 0,
// where the host file says 1): the child runs on the CPU sysfs gives.
TEST(CliRun, BindsCpusNearTheGpuOnTheRealDriversPath) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || !CPU_ISSET(0, &set) || !CPU_ISSET(1, &set))
    GTEST_SKIP() << "CPUs 0 and 1 not both available here";
  std::string locks = temp_dir("locks");
  std::string sys = temp_dir("sys");
  std::filesystem::create_directories(sys + "/bus/pci/devices/0000:9a:00.0");
  std::ofstream(sys + "/bus/pci/devices/0000:9a:00.0/local_cpulist") << "0\n";
  std::vector<std::string> real = {"LD_LIBRARY_PATH=" + std::string(GPUMAP_BUILD_DIR) + "/sim",
                                   "GPUMAP_FAKE_HOST=" + host_path("pick4"), "GPUMAP_SYSFS_ROOT=" + sys,
                                   "GPUMAP_LOCK_DIR=" + locks};
  CliRun r = gpumap({"run", "--include", "2", "--", "grep", "Cpus_allowed_list", "/proc/self/status"}, real);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "Cpus_allowed_list:\t0\n") << r.err;
  EXPECT_NE(r.err.find("CPUs: 0\n"), std::string::npos) << r.err;
  CliRun free = gpumap({"run", "--include", "2", "--no-cpu-bind", "--", "grep", "Cpus_allowed_list", "/proc/self/status"}, real);
  ASSERT_EQ(free.code, 0) << free.err;
  EXPECT_EQ(free.out, own_cpus_line());
}

}  // namespace
}  // namespace gpumap::testing
