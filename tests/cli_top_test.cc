// `gpumap top` as a person sees it: started in a real terminal (tmux) against a simulated host
// whose GPU processes are real sleeping processes, driven with keys, read from the screen.
#include <signal.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "fleet/fake_prometheus.h"
#include "fleet/fleet_fixture.h"
#include "model/text.h"
#include "tmux_pane.h"

namespace gpumap::testing {
namespace {

/// h200x2 whose GPU 0 runs `gpu0` and GPU 1 `gpu1` (pids).
std::string host_with(const std::vector<int>& gpu0, const std::vector<int>& gpu1) {
  std::ifstream in(host_path("h200x2"));
  nlohmann::json h = nlohmann::json::parse(in);
  for (int g = 0; g < 2; ++g) {
    nlohmann::json list = nlohmann::json::array();
    for (int pid : g ? gpu1 : gpu0) list.push_back({{"pid", pid}, {"used_memory_mib", 1000 + pid % 1000}});
    h["gpus"][g]["processes"] = list;
  }
  return write_temp_file("top-host.json", h.dump());
}

/// `gpumap top ARGS` with a clean environment: a UTF-8 xterm unless `env` says otherwise.
std::vector<std::string> top_command(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
  std::vector<std::string> c = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", "TERM=xterm-256color", "LANG=C.UTF-8"};
  c.insert(c.end(), env.begin(), env.end());
  c.push_back(GPUMAP_BINARY);
  c.push_back("top");
  c.insert(c.end(), args.begin(), args.end());
  return c;
}

#define REQUIRE_TMUX() \
  if (!has_tmux()) FAIL() << "tmux is not installed: scripts/deps.sh --test installs it (the test needs a real terminal)"

TEST(CliTop, AFindingAppearsWithItsProcessAndGoesWhenItEnds) {
  REQUIRE_TMUX();
  auto outside = std::make_unique<Sleeper>(std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1"}, "python3 stray.py");
  Sleeper rank({"CUDA_VISIBLE_DEVICES=0,1", "LOCAL_RANK=1"}, "python3 train.py");
  int stray = outside->pid();
  Tmux t(80, 24, top_command({"--simulate", host_with({stray}, {rank.pid()}), "--interval", "0.25"}));
  ASSERT_TRUE(t.started());
  std::string s = t.wait_for_text("outside-visible-set");
  EXPECT_NE(s.find(std::to_string(stray) + " root        0 none"), std::string::npos) << s;  // its own cuda:N: none
  EXPECT_NE(s.find(std::to_string(rank.pid()) + " root        1 cuda:1"), std::string::npos) << s;
  EXPECT_NE(s.find("[error] GPU 0 outside-visible-set (pid " + std::to_string(stray) + ")"), std::string::npos) << s;
  outside->kill();  // the process ends: its row says so and the finding goes
  s = t.wait_for([](const std::string& x) { return x.find("outside-visible-set") == std::string::npos; });
  EXPECT_NE(s.find(std::to_string(stray) + " ?           0 exited"), std::string::npos) << s;
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
  EXPECT_EQ(t.format("#{alternate_on}"), "0");  // the terminal is back as it was
  EXPECT_EQ(t.format("#{cursor_flag}"), "1");   // with its cursor
}

TEST(CliTop, SortFilterDetailAndResizeAsAPersonUsesThem) {
  REQUIRE_TMUX();
  Sleeper a({"CUDA_VISIBLE_DEVICES=1"}, "python3 alpha.py");
  Sleeper b({"LOCAL_RANK=0"}, "python3 beta-with-a-long-name.py --epochs 100 --batch-size 64 --lr 0.0003");
  Tmux t(80, 24, top_command({"--simulate", host_with({a.pid()}, {b.pid()})}));
  ASSERT_TRUE(t.started());
  t.wait_for_text("alpha.py");
  t.keys({">", ">"});  // GPU -> CUDA -> MEM: largest first, as htop and nvitop sort resources
  t.wait_for_text("MEM▼");
  t.keys({">", ">", ">", ">", ">", ">"});  // -> SM% -> CPU% -> RSS -> TIME -> JOB -> RANK
  t.wait_for_text("RANK▲");
  t.keys({"/", "b", "e", "t", "a", "Enter"});
  std::string s = t.wait_for([](const std::string& x) { return x.find("alpha.py") == std::string::npos; });
  EXPECT_NE(s.find("beta-with"), std::string::npos) << s;
  t.keys({"Enter"});  // the one process left, in detail
  s = t.wait_for_text("Variables it started with");
  EXPECT_NE(s.find("LOCAL_RANK=0"), std::string::npos) << s;
  EXPECT_NE(s.find("CUDA_VISIBLE_DEVICES=(unset)"), std::string::npos) << s;
  EXPECT_NE(s.find("cuda:1 -> nvidia-smi 1"), std::string::npos) << s;
  t.keys({"Escape"});
  t.keys({"Escape"});  // the filter goes too
  t.wait_for_text("alpha.py");
  EXPECT_EQ(t.screen().find("--lr 0.0003"), std::string::npos);  // 80 columns: the command is cut
  t.tmux({"resize-window", "-x", "160", "-y", "40"});
  s = t.wait_for_text("--lr 0.0003");  // 160 columns: all of it, beside CPU%, RSS and TIME
  t.tmux({"resize-window", "-x", "60", "-y", "20"});
  s = t.wait_for_text("needs at least");
  // Broken between words, not cut at the edge: the lines read as the whole sentence.
  std::string joined;
  for (std::string line : split(s, '\n')) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) joined += (joined.empty() ? "" : " ") + line;
  }
  EXPECT_EQ(joined, "gpumap top needs at least 80x24; this terminal is 60x20 (q quits)") << s;
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
}

TEST(CliTop, ColourUnlessNoColorAndAsciiUnderLangC) {
  REQUIRE_TMUX();
  Sleeper a({"CUDA_VISIBLE_DEVICES=1"}, "python3 stray.py");
  std::string host = host_with({a.pid()}, {});
  {
    Tmux t(80, 24, top_command({"--simulate", host}));
    t.wait_for_text("outside-visible-set");
    std::string e = t.screen_with_escapes();
    EXPECT_NE(e.find("\033[31m"), std::string::npos) << e;  // the error in red
    EXPECT_NE(e.find("▕"), std::string::npos) << e;          // block bars
  }
  {
    Tmux t(80, 24, top_command({"--simulate", host}, {"NO_COLOR=1"}));
    t.wait_for_text("outside-visible-set");
    std::string e = t.screen_with_escapes();
    EXPECT_EQ(e.find("\033[31m"), std::string::npos) << e;
    for (const char* c : {"\033[32m", "\033[33m", "\033[36m", "\033[38;"})  // no colour at all
      EXPECT_EQ(e.find(c), std::string::npos) << c << e;
    EXPECT_NE(e.find("\033[1m"), std::string::npos) << e;  // bold stays
  }
  {
    Tmux t(80, 24, top_command({"--simulate", host}, {"LANG=C"}));
    std::string s = t.wait_for_text("outside-visible-set");
    for (unsigned char c : s) ASSERT_LT(c, 0x80) << s;
    EXPECT_NE(s.find("UTIL[    "), std::string::npos) << s;  // ASCII bars
  }
}

TEST(CliTop, SigtermAndCtrlCRestoreTheTerminal) {
  REQUIRE_TMUX();
  for (bool term : {true, false}) {
    Tmux t(80, 24, top_command({"--simulate", "h200x2"}));
    t.wait_for_text("gpumap top");
    EXPECT_EQ(t.format("#{alternate_on}"), "1");
    if (term) {  // the shell's child is gpumap (env execs it)
      std::string sh = t.format("#{pane_pid}");
      std::ifstream children("/proc/" + sh + "/task/" + sh + "/children");
      int pid = 0;
      ASSERT_TRUE(children >> pid) << "no child of the pane's shell";
      ::kill(pid, SIGTERM);
    } else {
      t.keys({"C-c"});
    }
    EXPECT_EQ(t.exit_status(), "0") << (term ? "SIGTERM" : "Ctrl-C");
    EXPECT_EQ(t.format("#{alternate_on}"), "0");
    EXPECT_EQ(t.format("#{cursor_flag}"), "1");
  }
}

TEST(CliTop, AHungDriverLeavesTheScreenUsableAndSaysItIsStale) {
  REQUIRE_TMUX();
  std::ifstream in(host_path("h200x2"));
  nlohmann::json h = nlohmann::json::parse(in);
  h["faults"] = {{{"call", "nvmlDeviceGetCount"}, {"after", 3}, {"hang", true}}};  // the driver hangs from a later read on
  Tmux t(80, 24, top_command({"--simulate", write_temp_file("hang-host.json", h.dump()), "--interval", "0.25"}));
  std::string s = t.wait_for_text("STALE: the driver has not answered for");
  EXPECT_NE(s.find(" 1 cuda:1"), std::string::npos) << s;  // the last good read stays on screen
  t.keys({"h"});
  t.wait_for_text("gpumap top: keys");  // keys still work
  t.keys({"Escape", "q"});
  EXPECT_EQ(t.exit_status(), "0");  // quits at once, leaving the hung read behind
  EXPECT_EQ(t.format("#{alternate_on}"), "0");
}

TEST(CliTop, ASignalGoesToTheSelectedProcessAfterConfirmation) {
  REQUIRE_TMUX();
  Sleeper victim({"LOCAL_RANK=0"}, "python3 victim.py");
  Tmux t(80, 24, top_command({"--simulate", host_with({victim.pid()}, {})}));
  t.wait_for_text("victim.py");
  t.keys({"k"});
  t.wait_for_text("signal pid " + std::to_string(victim.pid()) + ": t TERM  k KILL  h HUP  i INT");
  t.keys({"1"});  // a digit sends nothing (it once sent HUP at once): it cancels
  t.wait_for_text("no signal sent");
  t.keys({"k", "t"});
  t.wait_for_text("send TERM to pid " + std::to_string(victim.pid()) + "? y sends it");
  t.keys({"n"});
  t.wait_for_text("no signal sent");
  EXPECT_EQ(waitpid(victim.pid(), nullptr, WNOHANG), 0);  // still running
  t.keys({"k", "t", "y"});
  std::string s = t.wait_for_text("sent SIGTERM to pid " + std::to_string(victim.pid()));
  int status = 0;
  ASSERT_EQ(waitpid(victim.pid(), &status, 0), victim.pid());
  victim.reaped();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
}

TEST(CliTop, EightGpusAndFortySleepersAt132x40ShowTwentyProcessRowsInCompactMode) {
  REQUIRE_TMUX();
  std::vector<std::unique_ptr<Sleeper>> sleepers;
  std::ifstream in(host_path("dgx8"));
  nlohmann::json h = nlohmann::json::parse(in);
  for (auto& g : h["gpus"]) g["processes"] = nlohmann::json::array();
  for (int i = 0; i < 40; ++i) {
    sleepers.push_back(std::make_unique<Sleeper>(std::vector<std::string>{"LOCAL_RANK=0"}, "python3 sleeper.py", 120));
    h["gpus"][i % 8]["processes"].push_back({{"pid", sleepers.back()->pid()}, {"used_memory_mib", 100 + i}});
  }
  Tmux t(132, 40, top_command({"--simulate", write_temp_file("dgx8-sleepers.json", h.dump())}));
  ASSERT_TRUE(t.started());
  auto rows = [](const std::string& s) {
    size_t n = 0;
    for (size_t at = s.find("sleeper.py"); at != std::string::npos; at = s.find("sleeper.py", at + 1)) ++n;
    return n;
  };
  std::string s = t.wait_for([&](const std::string& x) { return rows(x) >= 20; });
  EXPECT_GE(rows(s), 20u) << s;
  EXPECT_NE(s.find("CPU%"), std::string::npos) << s;  // the host columns beside the GPU's
  EXPECT_NE(s.find("RSS"), std::string::npos) << s;
  EXPECT_NE(s.find("TIME"), std::string::npos) << s;
  t.keys({"c"});  // the full blocks: fewer rows
  s = t.wait_for([&](const std::string& x) { return rows(x) < 20 && x.find("\n   UTIL") != std::string::npos; });
  t.keys({"c"});
  t.wait_for([&](const std::string& x) { return rows(x) >= 20; });
  t.keys({"/", "p", "i", "d", ":", std::to_string(sleepers[0]->pid()), "Enter"});
  s = t.wait_for([&](const std::string& x) { return rows(x) == 1; });
  EXPECT_NE(s.find("filter: pid:" + std::to_string(sleepers[0]->pid())), std::string::npos) << s;  // in the footer
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
}

// Issue 53: 9 GPU processes at 80x24 (dgx8, the GPU lines folded) are more than the table's
// rows: every row is reached, the screen says how many are off it, and k offers only the row seen.
TEST(CliTop, At80x24NineProcessesScrollEveryRowIsReachedAndOnlyARowShownIsSignalled) {
  REQUIRE_TMUX();
  std::vector<std::unique_ptr<Sleeper>> sleepers;
  std::ifstream in(host_path("dgx8"));
  nlohmann::json h = nlohmann::json::parse(in);
  for (auto& g : h["gpus"]) g["processes"] = nlohmann::json::array();
  for (int i = 0; i < 9; ++i) {
    sleepers.push_back(std::make_unique<Sleeper>(std::vector<std::string>{"LOCAL_RANK=0"}, "python3 row.py", 120));
    h["gpus"][std::min(i, 7)]["processes"].push_back({{"pid", sleepers.back()->pid()}, {"used_memory_mib", 100 + i}});
  }
  // Sorted by GPU, then pid: the last row is the larger pid of GPU 7's two.
  int last = std::max(sleepers[7]->pid(), sleepers[8]->pid());
  auto row_shown = [](const std::string& screen, int pid) {  // a table line: the pid right-aligned in 7 cells
    std::string p = std::to_string(pid);
    return screen.find("\n" + std::string(p.size() < 7 ? 7 - p.size() : 0, ' ') + p + " ") != std::string::npos;
  };
  Tmux t(80, 24, top_command({"--simulate", write_temp_file("dgx8-nine.json", h.dump())}));
  ASSERT_TRUE(t.started());
  std::string s = t.wait_for_text(" more  (PgUp/PgDn");
  EXPECT_NE(s.find("\u2193 "), std::string::npos) << s;  // rows below
  EXPECT_FALSE(row_shown(s, last)) << "the last row is below the screen\n" << s;
  t.keys({"End"});
  s = t.wait_for_text("\u2191 ");  // rows above now
  EXPECT_TRUE(row_shown(s, last)) << "End: the last row on screen\n" << s;
  t.keys({"k"});
  s = t.wait_for_text("signal pid " + std::to_string(last) + ": t TERM");
  EXPECT_NE(s.find("pid " + std::to_string(last) + "  user "), std::string::npos) << "the confirmation names it\n" << s;
  t.keys({"Escape"});
  t.wait_for_text("no signal sent");
  t.keys({"Home"});
  s = t.wait_for([&](const std::string& x) { return x.find("\u2191 ") == std::string::npos && x.find("\u2193 ") != std::string::npos; });
  EXPECT_FALSE(row_shown(s, last)) << s;
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
  for (auto& p : sleepers) EXPECT_EQ(waitpid(p->pid(), nullptr, WNOHANG), 0) << "nothing was signalled";
}

TEST(CliTop, PsPsJsonMetricsAndTopReadTheSameProcessUtilisation) {
  // A busy process at 90 %: every front end says 90 (ps said [N/A] and null, issue 43).
  std::ifstream in(host_path("h200x2"));
  nlohmann::json h = nlohmann::json::parse(in);
  h["gpus"][0]["processes"] = {{{"pid", 4242}, {"used_memory_mib", 1000}, {"sm_utilization", 90}}};
  std::string host = write_temp_file("busy-host.json", h.dump());
  CliRun r = gpumap({"ps", "--query=pid,utilization.sm", "--simulate", host});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4242, 90 %"), std::string::npos) << r.out;
  r = gpumap({"ps", "--json", "--simulate", host});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"sm_utilization\":90"), std::string::npos) << r.out;
  r = gpumap({"metrics", "--simulate", host});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gpumap_process_sm_utilization_ratio{pid=\"4242\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("} 0.9\n"), std::string::npos) << r.out;
  r = gpumap({"top", "--once", "--sort", "sm", "--simulate", host}, {"LANG=C.UTF-8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1000MiB   90"), std::string::npos) << r.out;
}

TEST(CliTop, OnceIsPlainTextAndJsonOrNoTerminalAreRefusedWithTheWay) {
  Sleeper a({"CUDA_VISIBLE_DEVICES=1"}, "python3 stray.py");
  CliRun r = gpumap({"top", "--once", "--simulate", host_with({a.pid()}, {})}, {"LANG=C.UTF-8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outside-visible-set"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not include it"), std::string::npos) << r.out;  // the message whole, wrapped
  r = gpumap({"top", "--json", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("gpumap ps --json --watch"), std::string::npos) << r.err;
  r = gpumap({"top", "--simulate", "h200x2"});  // stdout is a pipe here
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("gpumap top --once"), std::string::npos) << r.err;
  r = gpumap({"top", "--sort", "size", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sort size"), std::string::npos) << r.err;
  r = gpumap({"top", "--sort", "cpuu", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean `cpu`"), std::string::npos) << r.err;
  for (const char* col : {"sm", "cpu", "rss", "time", "mem", "SM%"}) {  // every column the keys sort
    r = gpumap({"top", "--once", "--sort", col, "--simulate", "h200x2"}, {"LANG=C.UTF-8"});
    EXPECT_EQ(r.code, 0) << col << r.err;
  }
  r = gpumap({"top", "--interval", "0", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
}

// --- the fleet: top --prometheus URL ---------------------------------------------------------

TEST(CliTop, TheFleetLiveNodeByNodeAndPrometheusStoppingMidSession) {
  REQUIRE_TMUX();
  auto prometheus = std::make_unique<FakePrometheusServer>(three_node_fleet());
  Tmux t(80, 24, top_command({"--prometheus", prometheus->url(), "--interval", "0.25"}));
  ASSERT_TRUE(t.started());
  std::string s = t.wait_for_text("node-c");
  EXPECT_NE(s.find("3 nodes (1 down), 4 GPUs, 5 GPU processes, 1 Slurm job"), std::string::npos) << s;
  EXPECT_NE(s.find("DOWN"), std::string::npos) << s;
  t.keys({"Enter"});  // node-a, selected first: its GPUs and processes with their own cuda:N
  s = t.wait_for_text("pid 101  cuda:1  alice  job 77 rank 1");
  EXPECT_NE(s.find("pid 100  cuda:0  alice  job 77 rank 0"), std::string::npos) << s;
  prometheus.reset();  // Prometheus stops: said, with the last answer kept on the screen
  s = t.wait_for_text("Prometheus unreachable");
  EXPECT_NE(s.find("pid 101  cuda:1"), std::string::npos) << s;
  t.keys({"k"});  // top's key that does not apply here says so
  t.wait_for_text("no signals from the fleet view");
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
}

TEST(CliTop, TheFleetOnceAndItsErrors) {
  FakePrometheusServer prometheus(three_node_fleet());
  CliRun once = gpumap({"top", "--prometheus", prometheus.url(), "--once"}, {"COLUMNS=80"});
  EXPECT_EQ(once.code, 0) << once.err;
  EXPECT_NE(once.out.find("pid 300  cuda:?  bob  pod ml/trainer-0"), std::string::npos) << once.out;  // every node expanded
  EXPECT_EQ(once.out.find('\033'), std::string::npos);
  CliRun down = gpumap({"top", "--fleet", "--once"}, {"GPUMAP_PROMETHEUS=http://127.0.0.1:1"});
  EXPECT_EQ(down.code, 1);  // as `gpumap fleet`: nothing drawn, the URL and the fix said
  EXPECT_NE(down.err.find("Prometheus at http://127.0.0.1:1 refused the connection"), std::string::npos) << down.err;
  CliRun tree = gpumap({"top", "--prometheus", prometheus.url(), "--tree"});
  EXPECT_EQ(tree.code, 2) << tree.err;
  CliRun node = gpumap({"top", "--node", "node-a", "--once"});
  EXPECT_EQ(node.code, 2) << node.err;
  EXPECT_NE(node.err.find("give --prometheus URL"), std::string::npos) << node.err;
  // --simulate names a host; the fleet view reads none (nothing is asked of Prometheus)
  CliRun sim = gpumap({"top", "--prometheus", prometheus.url(), "--simulate", "dgx8", "--once"});
  EXPECT_EQ(sim.code, 2) << sim.err;
  EXPECT_NE(sim.err.find("gpumap serve --simulate HOST"), std::string::npos) << sim.err;
  CliRun fleet_sim = gpumap({"fleet", "--prometheus", prometheus.url(), "--simulate", "dgx8"});
  EXPECT_EQ(fleet_sim.code, 2) << fleet_sim.err;
  EXPECT_NE(fleet_sim.err.find("gpumap fleet takes no --simulate"), std::string::npos) << fleet_sim.err;
  EXPECT_EQ(prometheus.requests(), 9);  // the --once frame's nine queries only
}

}  // namespace
}  // namespace gpumap::testing
