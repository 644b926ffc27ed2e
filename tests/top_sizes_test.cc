// `gpumap top` in real terminals (tmux) of the sizes people run it at besides 80x24 (issue 53):
// 132x40 and 200x60, every row reached by scrolling, the host panel, the history, the
// environment screen and tagging; and `top --prometheus` quitting while its first answer is still
// awaited (issue 56: the first read held `q` until Prometheus answered).
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "fleet/fake_prometheus.h"
#include "model/text.h"
#include "tmux_pane.h"

namespace gpumap::testing {
namespace {

#define REQUIRE_TMUX() \
  if (!has_tmux()) FAIL() << "tmux is not installed: scripts/deps.sh --test installs it (the test needs a real terminal)"

/// dgx8 whose GPUs run `n` sleeping processes named `name` (the i-th on GPU i % 8), each with `env`.
struct Sleepers {
  Sleepers(size_t n, const std::string& name, const std::vector<std::string>& env = {"LOCAL_RANK=0"}) {
    std::ifstream in(host_path("dgx8"));
    nlohmann::json h = nlohmann::json::parse(in);
    for (auto& g : h["gpus"]) g["processes"] = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) {
      procs.push_back(std::make_unique<Sleeper>(env, name, 120));
      h["gpus"][i % 8]["processes"].push_back({{"pid", procs.back()->pid()}, {"used_memory_mib", 100 + i}});
    }
    host = write_temp_file("dgx8-" + std::to_string(n) + ".json", h.dump());
  }
  std::vector<std::unique_ptr<Sleeper>> procs;
  std::string host;
};

/// The pids of the table rows on `screen` (a line that starts with the pid, right-aligned, maybe
/// after a tag's `*`) among `pids`.
std::set<int> rows_on(const std::string& screen, const std::vector<int>& pids) {
  std::set<int> out;
  for (int pid : pids) {
    std::string p = std::to_string(pid);
    for (const std::string& line : split(screen, '\n')) {
      size_t at = line.find_first_not_of(" *");
      if (at != std::string::npos && at < 8 && line.compare(at, p.size() + 1, p + " ") == 0) out.insert(pid);
    }
  }
  return out;
}

// 60 processes are more rows than 132x40 or 200x60 shows: PgDn from the top reaches every one,
// the screen says how many are above and below, End shows the last and Home the first.
TEST(TopSizes, At132x40And200x60EveryRowIsReachedByScrolling) {
  REQUIRE_TMUX();
  Sleepers s(60, "python3 many.py");
  std::vector<int> pids;
  for (auto& p : s.procs) pids.push_back(p->pid());
  std::sort(pids.begin(), pids.end());
  for (auto [w, h] : {std::pair<size_t, size_t>{132, 40}, {200, 60}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    Tmux t(w, h, top_tmux_command({"--simulate", s.host, "--sort", "pid"}));
    ASSERT_TRUE(t.started());
    std::string screen = t.wait_for_text(" more  (PgUp/PgDn");
    EXPECT_NE(screen.find("\u2193 "), std::string::npos) << screen;  // rows below
    std::set<int> first = rows_on(screen, pids);
    EXPECT_TRUE(first.count(pids.front())) << screen;
    EXPECT_FALSE(first.count(pids.back())) << "the last row is below the screen\n" << screen;
    EXPECT_GE(first.size(), h == 60 ? 30u : 15u) << "rows shown at this size\n" << screen;
    std::set<int> seen = first;
    for (int page = 0; page < 10 && !seen.count(pids.back()); ++page) {
      t.keys({"PageDown"});
      screen = t.wait_for([&](const std::string& x) { return rows_on(x, pids) != rows_on(screen, pids); });
      for (int pid : rows_on(screen, pids)) seen.insert(pid);
    }
    EXPECT_EQ(seen.size(), pids.size()) << "rows never shown by PgDn\n" << screen;
    EXPECT_NE(screen.find("\u2191 "), std::string::npos) << "rows above, said\n" << screen;
    t.keys({"Home"});
    screen = t.wait_for([&](const std::string& x) { return rows_on(x, pids).count(pids.front()) > 0; });
    t.keys({"End"});
    screen = t.wait_for([&](const std::string& x) { return rows_on(x, pids).count(pids.back()) > 0; });
    EXPECT_EQ(screen.find("\u2193 "), std::string::npos) << "nothing below the last row\n" << screen;
    t.keys({"q"});
    EXPECT_EQ(t.exit_status(), "0");
  }
}

/// The host panel's line and, from 40 lines, its cores' line.
bool has_host_panel(const std::string& screen) {
  for (const char* panel : {"CPU", "  MEM", "  load ", "  up ", "cores "})
    if (screen.find(panel) == std::string::npos) return false;
  return true;
}

// At 132x40: the host panel with its cores, Enter's history, e's environment with the GPU
// variables marked, and m's tags counted by k's prompt (Escape sends nothing).
TEST(TopSizes, At132x40TheHostPanelHistoryEnvironmentAndTagging) {
  REQUIRE_TMUX();
  Sleepers s(3, "python3 panel.py", {"LOCAL_RANK=0", "CUDA_VISIBLE_DEVICES=1", "GPUMAP_TEST_MARK=size132"});
  Tmux t(132, 40, top_tmux_command({"--simulate", s.host, "--sort", "pid"}));
  ASSERT_TRUE(t.started());
  std::string screen = t.wait_for(has_host_panel);  // from the second frame on (CPU% needs two)
  EXPECT_NE(screen.find("panel.py"), std::string::npos) << screen;
  t.keys({"Enter"});
  screen = t.wait_for_text("History (this session");
  t.keys({"Escape"});
  t.wait_for([](const std::string& x) { return x.find("History (this session") == std::string::npos; });
  t.keys({"e"});
  screen = t.wait_for_text("* read by gpumap");
  EXPECT_NE(screen.find("GPUMAP_TEST_MARK=size132"), std::string::npos) << screen;
  EXPECT_NE(screen.find("* CUDA_VISIBLE_DEVICES=1"), std::string::npos) << "the GPU variable marked\n" << screen;
  t.keys({"Escape"});
  t.wait_for_text("panel.py");
  t.keys({"m"});
  t.keys({"m"});
  screen = t.wait_for([](const std::string& x) { return std::count(x.begin(), x.end(), '*') >= 2; });
  t.keys({"k"});
  screen = t.wait_for_text("2 tagged processes");
  t.keys({"Escape"});
  t.wait_for_text("no signal sent");
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
  for (auto& p : s.procs) EXPECT_EQ(waitpid(p->pid(), nullptr, WNOHANG), 0) << "nothing was signalled";
}

// At 200x60 the host panel has its cores line and wider bars.
TEST(TopSizes, At200x60TheHostPanelAndCores) {
  REQUIRE_TMUX();
  Sleepers s(3, "python3 wide.py");
  Tmux t(200, 60, top_tmux_command({"--simulate", s.host}));
  ASSERT_TRUE(t.started());
  std::string screen = t.wait_for(has_host_panel);
  EXPECT_NE(screen.find("wide.py"), std::string::npos) << screen;
  t.keys({"q"});
  EXPECT_EQ(t.exit_status(), "0");
}

// A Prometheus that takes the connection and never answers: the screen says it is asking, and q
// ends top within a second (exit 0), the read still waiting.
TEST(TopFleetFirstRead, QuitsWithinASecondWhilePrometheusHasNotAnswered) {
  REQUIRE_TMUX();
  HostilePrometheusServer silent([](int, const std::atomic<bool>& stop) {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  Tmux t(80, 24, top_tmux_command({"--prometheus", silent.url()}));
  ASSERT_TRUE(t.started());
  t.wait_for_text("asking Prometheus");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto pressed = std::chrono::steady_clock::now();
  t.keys({"q"});
  std::string code;
  for (int i = 0; i < 100 && code.empty(); ++i) {
    std::string screen = t.screen();
    if (size_t at = screen.find("EXIT="); at != std::string::npos) code = screen.substr(at + 5, screen.find('\n', at) - at - 5);
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - pressed).count();
  EXPECT_EQ(code, "0");
  EXPECT_LT(took, 1.0) << "q while the first answer is awaited";
}

// A first read that fails ends the view with `fleet`'s error and exit code, the terminal restored.
TEST(TopFleetFirstRead, AnUnreachablePrometheusIsFleetsErrorAfterTheScreen) {
  REQUIRE_TMUX();
  Tmux t(80, 24, top_tmux_command({"--prometheus", "http://127.0.0.1:1"}));
  ASSERT_TRUE(t.started());
  EXPECT_EQ(t.exit_status(), "1");
  std::string screen = t.screen();
  EXPECT_NE(screen.find("refused the connection"), std::string::npos) << screen;
  EXPECT_EQ(t.format("#{alternate_on}"), "0") << "the terminal restored";
}

}  // namespace
}  // namespace gpumap::testing
