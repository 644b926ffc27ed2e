// `gpumap top --prometheus`'s keys and reads, without a terminal: the fleet's answer from a
// Prometheus in memory (tests/fleet/fake_prometheus.h), the keys as the pure function they are.
#include <gtest/gtest.h>

#include "fleet/fake_prometheus.h"
#include "fleet/fleet_fixture.h"
#include "model/error.h"
#include "session/fleet.h"
#include "top/top_app.h"
#include "top/top_keys.h"

namespace gpumap {
namespace {

using testing::kFleetNow;

const int64_t kNowMs = static_cast<int64_t>(kFleetNow * 1000);

FleetRequest request() {
  FleetRequest r;
  r.prometheus = "http://prom.example:9090";
  return r;
}

FleetTopFrame fleet_frame() {
  testing::FakePrometheusTransport prometheus(testing::three_node_fleet());
  return read_fleet_top_frame({}, [&] { return read_fleet(request(), prometheus, kFleetNow); }, kNowMs);
}

std::string screen_text(const FleetTopFrame& f, const FleetTopView& v, double seconds_after, size_t width = 80) {
  TopStatus s;
  s.now_unix_ms = kNowMs + static_cast<int64_t>(seconds_after * 1000);
  return top_text(render_fleet_top(f, v, s, width, 24), false);
}

TEST(FleetTopKeys, EnterAndRightExpandANodeLeftAndEnterFoldIt) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  ASSERT_EQ(fleet_top_rows(f, v).size(), 3u);
  fleet_top_key(v, kKeyEnter, f, 10);  // node-a
  EXPECT_EQ(v.expanded, std::set<std::string>{"node-a:9467"});
  std::vector<FleetTopRow> rows = fleet_top_rows(f, v);
  ASSERT_EQ(rows.size(), 7u);  // node-a, GPU 0, pid 100, GPU 1, pid 101, node-b, node-c
  EXPECT_EQ(rows[2].process->pid, 100);
  EXPECT_NE(screen_text(f, v, 0).find("pid 101  cuda:1  alice  job 77 rank 1"), std::string::npos) << screen_text(f, v, 0);
  fleet_top_key(v, kKeyDown, f, 10);
  fleet_top_key(v, kKeyDown, f, 10);  // on pid 100
  EXPECT_EQ(v.selected, 2u);
  fleet_top_key(v, kKeyLeft, f, 10);  // folds its node, the selection back on the node
  EXPECT_TRUE(v.expanded.empty());
  EXPECT_EQ(v.selected, 0u);
  fleet_top_key(v, kKeyDown, f, 10);
  fleet_top_key(v, kKeyRight, f, 10);  // node-b
  EXPECT_EQ(v.expanded, std::set<std::string>{"node-b:9467"});
  fleet_top_key(v, kKeyEnter, f, 10);  // Enter again folds
  EXPECT_TRUE(v.expanded.empty());
  fleet_top_key(v, kKeyDown, f, 10);
  fleet_top_key(v, kKeyEnter, f, 10);  // node-c is down: expanded, and said
  EXPECT_EQ(v.message, "node-c: down, no GPU known");
}

TEST(FleetTopKeys, EExpandsEveryNodeThenFoldsThem) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  v.selected = 1;  // node-b
  fleet_top_key(v, 'e', f, 10);
  EXPECT_EQ(v.expanded.size(), 3u);
  EXPECT_EQ(v.message, "every node expanded");
  EXPECT_EQ(fleet_top_rows(f, v)[v.selected].node->node, "node-b");  // still on node-b
  fleet_top_key(v, 'e', f, 10);
  EXPECT_TRUE(v.expanded.empty());
  EXPECT_EQ(v.selected, 1u);
}

TEST(FleetTopKeys, TopsKeysKeepTheirMeaningAndThoseThatDoNotApplySaySo) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  EXPECT_EQ(fleet_top_key(v, 'q', f, 10).kind, TopAction::kQuit);
  EXPECT_EQ(fleet_top_key(v, kKeyCtrlC, f, 10).kind, TopAction::kQuit);
  fleet_top_key(v, 'h', f, 10);
  EXPECT_EQ(v.screen, FleetTopView::Screen::kHelp);
  EXPECT_NE(screen_text(f, v, 0).find("expand the node"), std::string::npos);
  fleet_top_key(v, 'x', f, 10);  // any key closes the help
  EXPECT_EQ(v.screen, FleetTopView::Screen::kMain);
  fleet_top_key(v, '>', f, 10);
  EXPECT_EQ(v.sort, FleetTopColumn::kState);
  EXPECT_EQ(v.message, "sorted by STATE");
  fleet_top_key(v, '<', f, 10);
  EXPECT_EQ(v.sort, FleetTopColumn::kNode);
  fleet_top_key(v, 'r', f, 10);
  EXPECT_EQ(fleet_top_rows(f, v)[0].node->node, "node-c");
  for (int k : {'/', 'u', 's', 'e', 'r', ':', 'b', 'o', 'b'}) fleet_top_key(v, k, f, 10);
  fleet_top_key(v, kKeyEnter, f, 10);
  EXPECT_EQ(v.filter, "user:bob");
  for (int k : {'t', 'c', 'k', 'i'}) {
    v.message.clear();
    EXPECT_EQ(fleet_top_key(v, k, f, 10).kind, TopAction::kNone);
    EXPECT_FALSE(v.message.empty()) << static_cast<char>(k);
  }
  EXPECT_NE(v.message.find("--all"), std::string::npos) << v.message;
  EXPECT_NE(screen_text(f, v, 0).find("info findings are counted, not fetched"), std::string::npos);
  EXPECT_EQ(fleet_top_key(v, ' ', f, 10).kind, TopAction::kNone);
  EXPECT_TRUE(v.paused);
  EXPECT_EQ(fleet_top_key(v, ' ', f, 10).kind, TopAction::kReadNow);
  EXPECT_EQ(fleet_top_key(v, '+', f, 10).kind, TopAction::kReadNow);
  EXPECT_EQ(v.interval_s, 1.0);
  fleet_top_key(v, kKeyEscape, f, 10);
  EXPECT_TRUE(v.filter.empty());
}

TEST(FleetTopRead, PrometheusFailingMidSessionKeepsTheLastAnswerAndSaysItsAge) {
  testing::FakePrometheusTransport prometheus(testing::three_node_fleet());
  auto read = [&] { return read_fleet(request(), prometheus, kFleetNow); };
  FleetTopFrame f = read_fleet_top_frame({}, read, kNowMs);
  ASSERT_TRUE(f.answer);
  EXPECT_TRUE(f.error.empty());
  prometheus.fail = HttpFailure::kRefused;  // stopped
  f = read_fleet_top_frame(f, read, kNowMs + 30000);
  ASSERT_TRUE(f.answer);  // the last good answer stays on the screen
  EXPECT_EQ(f.read_unix_ms, kNowMs);
  EXPECT_NE(f.error.find("refused the connection"), std::string::npos) << f.error;
  FleetTopView v;
  std::string s = screen_text(f, v, 31, 200);
  EXPECT_NE(s.find("Prometheus unreachable, showing the answer of 31s ago (trying again every 2s): Prometheus at "
                   "http://prom.example:9090 refused the connection"),
            std::string::npos)
      << s;
  // At 80 columns the age stays; the error's words are cut at the edge.
  EXPECT_NE(screen_text(f, v, 31).find("Prometheus unreachable, showing the answer of 31s ago"), std::string::npos);
  EXPECT_NE(s.find("node-a"), std::string::npos) << s;
  prometheus.fail = HttpFailure::kTimeout;  // hangs: each read bounded by the timeout, said the same way
  f = read_fleet_top_frame(f, read, kNowMs + 40000);
  EXPECT_NE(f.error.find("did not answer within 10 s"), std::string::npos) << f.error;
  prometheus.fail.reset();  // back
  f = read_fleet_top_frame(f, read, kNowMs + 50000);
  EXPECT_TRUE(f.error.empty());
  EXPECT_EQ(f.read_unix_ms, kNowMs + 50000);
  EXPECT_NE(screen_text(f, v, 50).find("3 nodes (1 down)"), std::string::npos);
}

// The first read runs on the reader thread under the screen (issue 56: q while Prometheus has
// not answered), so an unreachable Prometheus at start is `fleet`'s error once the screen is
// restored: tests/top_sizes_test.cc's TopFleetFirstRead drive that in a real terminal.  Without a
// terminal the view is refused before Prometheus is asked at all.
TEST(FleetTopRead, WithoutATerminalNothingIsAskedOfPrometheus) {
  testing::FakePrometheusTransport prometheus(testing::three_node_fleet());
  prometheus.fail = HttpFailure::kRefused;
  FleetTopOptions o;
  try {
    run_fleet_top(o, [&] { return read_fleet(request(), prometheus, kFleetNow); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("needs a terminal"), std::string::npos) << e.what();
  }
  EXPECT_EQ(prometheus.requests, 0);
}

}  // namespace
}  // namespace gpumap
