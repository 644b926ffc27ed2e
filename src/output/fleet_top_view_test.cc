#include "output/fleet_top_view.h"

#include <gtest/gtest.h>

#include "fleet/fake_prometheus.h"
#include "fleet/fleet_fixture.h"
#include "model/text.h"
#include "output/style.h"
#include "session/fleet.h"
#include "top/top_app.h"
#include "top/top_keys.h"

namespace gpumap {
namespace {

using testing::kFleetNow;

/// The three-node fleet (node-a, node-b up; node-c down 95 s) as `top --prometheus` reads it:
/// through session/fleet.h from a Prometheus in memory.
FleetTopFrame fleet_frame() {
  testing::FakePrometheusTransport prometheus(testing::three_node_fleet());
  FleetRequest req;
  req.prometheus = "http://prom.example:9090";
  FleetTopFrame f;
  f.answer = std::make_shared<const FleetAnswer>(read_fleet(req, prometheus, kFleetNow));
  f.read_unix_ms = static_cast<int64_t>(kFleetNow * 1000);
  return f;
}

TopStatus at(double seconds_after) {
  TopStatus s;
  s.now_unix_ms = static_cast<int64_t>((kFleetNow + seconds_after) * 1000);
  return s;
}

std::string text(const std::vector<TopLine>& lines) { return top_text(lines, false); }

/// The line that contains `needle` ("" when none).
std::string line_with(const std::vector<TopLine>& lines, const std::string& needle) {
  for (const std::string& l : split(text(lines), '\n'))
    if (l.find(needle) != std::string::npos) return l;
  return "";
}

void expect_fits(const std::vector<TopLine>& lines, size_t width, size_t height) {
  EXPECT_EQ(lines.size(), height);
  for (const TopLine& l : lines) {
    size_t w = 0;
    for (const TopSpan& s : l) w += display_width(s.text);
    EXPECT_LE(w, width) << text({l});
  }
}

TEST(FleetTopView, OneRowPerNodeWithItsStateAt80Columns) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  std::vector<TopLine> lines = render_fleet_top(f, v, at(0), 80, 24);
  expect_fits(lines, 80, 24);
  std::string all = text(lines);
  EXPECT_NE(all.find("fleet: Prometheus http://prom.example:9090"), std::string::npos) << all;
  EXPECT_NE(all.find("3 nodes (1 down), 4 GPUs, 5 GPU processes, 1 Slurm job"), std::string::npos) << all;
  // node-a: up, read 1 s ago, 2 GPUs, 1 GiB of 79.6 GiB known, util 97 %, 2 processes, 2 findings.
  std::string a = line_with(lines, "node-a");
  EXPECT_NE(a.find("up 1s"), std::string::npos) << a;
  EXPECT_NE(a.find("1.0/80G"), std::string::npos) << a;
  EXPECT_NE(a.find("97/97%"), std::string::npos) << a;
  EXPECT_NE(a.find("  2 "), std::string::npos) << a;
  EXPECT_NE(line_with(lines, "node-c").find("DOWN 95s"), std::string::npos) << all;
  EXPECT_NE(line_with(lines, "node-b").find("up 2s"), std::string::npos) << all;
  // Folded: no process yet; the findings by cause below, worst first.
  EXPECT_EQ(all.find("pid 100"), std::string::npos) << all;
  EXPECT_NE(all.find("Findings by cause  (2 info counted, not listed: --all lists them)"), std::string::npos) << all;
  EXPECT_NE(all.find("[error] rank-on-wrong-gpu: 1 place on 1 node: node-a pid 101 (job 77)"), std::string::npos) << all;
  EXPECT_NE(all.find("[warning] ranks-share-gpu: 2 places on 1 node"), std::string::npos) << all;
  EXPECT_NE(lines.back().front().text.find("q quit  h help  Enter expand  Left fold  e all  <> sort  / filter  space pause"), std::string::npos) << all;
}

TEST(FleetTopView, AnExpandedNodeShowsItsGpusAndEachProcesssOwnCudaAt120Columns) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  v.expanded = {"node-b:9467"};
  std::vector<TopLine> lines = render_fleet_top(f, v, at(0), 120, 30);
  expect_fits(lines, 120, 30);
  std::string all = text(lines);
  EXPECT_NE(all.find("    GPU 0  NVIDIA A100-SXM4-80GB"), std::string::npos) << all;
  EXPECT_NE(all.find("      pid 200  cuda:0  alice  job 77 rank 2  [ranks-share-gpu]  python train.py"), std::string::npos) << all;
  EXPECT_NE(all.find("      pid 201  cuda:0  alice  job 77 rank 3"), std::string::npos) << all;
  // The pod's process: no cuda_ordinal and no command label: said unknown, not left out.
  EXPECT_NE(all.find("      pid 300  cuda:?  bob  pod ml/trainer-0  ?"), std::string::npos) << all;
  EXPECT_EQ(all.find("pid 100"), std::string::npos) << all;  // node-a stays folded
  // At 80 columns the same rows are cut at the edge, never wrapped.
  expect_fits(render_fleet_top(f, v, at(0), 80, 24), 80, 24);
}

TEST(FleetTopView, StaleAndFailedReadsAreSaidWithTheirAge) {
  FleetTopFrame f = fleet_frame();
  FleetAnswer a = *f.answer;
  a.nodes[1].exporter_stale = true;   // node-b serves an older read
  a.nodes[0].exporter_up = false;     // node-a's driver read failed
  f.answer = std::make_shared<const FleetAnswer>(a);
  std::vector<TopLine> lines = render_fleet_top(f, FleetTopView{}, at(0), 80, 24);
  EXPECT_NE(line_with(lines, "node-b").find("STALE 2s"), std::string::npos) << text(lines);
  EXPECT_NE(line_with(lines, "node-a").find("NO READ 1s"), std::string::npos) << text(lines);
  EXPECT_NE(text(lines).find("3 nodes (1 down, 2 stale)"), std::string::npos) << text(lines);
}

TEST(FleetTopView, TargetsNeverReadAndAPartialAnswerAreSaid) {
  // Two targets of the scrape job never read (one never came up, one exports no gpumap series):
  // DOWN rows with "never"; then a partial answer: the status line says so, a node missing MISSING.
  testing::FakePrometheusTransport prometheus(testing::fleet_with_unread_targets());
  FleetRequest req;
  req.prometheus = "http://prom.example:9090";
  FleetTopFrame f;
  f.answer = std::make_shared<const FleetAnswer>(read_fleet(req, prometheus, kFleetNow));
  f.read_unix_ms = static_cast<int64_t>(kFleetNow * 1000);
  std::vector<TopLine> lines = render_fleet_top(f, FleetTopView{}, at(0), 80, 24);
  EXPECT_NE(line_with(lines, "node-d").find("DOWN never"), std::string::npos) << text(lines);
  EXPECT_NE(line_with(lines, "node-e").find("DOWN never"), std::string::npos) << text(lines);
  EXPECT_NE(text(lines).find("5 nodes (3 down)"), std::string::npos) << text(lines);
  FleetAnswer a = *f.answer;
  a.partial = true;
  a.partial_queries = {"gpus"};
  a.nodes[1].up = false;
  a.nodes[1].down_reason = "not_in_answer";
  f.answer = std::make_shared<const FleetAnswer>(a);
  lines = render_fleet_top(f, FleetTopView{}, at(0), 120, 24);
  EXPECT_NE(line_with(lines, "node-b").find("MISSING 2s"), std::string::npos) << text(lines);
  EXPECT_NE(text(lines).find("PARTIAL answer: a store or shard did not answer"), std::string::npos) << text(lines);
}

TEST(FleetTopView, SortsAndFiltersTheNodes) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  v.sort = FleetTopColumn::kState;  // down first
  std::vector<FleetTopRow> rows = fleet_top_rows(f, v);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].node->node, "node-c");
  v.sort = FleetTopColumn::kProcesses;  // largest first: node-b has 3
  EXPECT_EQ(fleet_top_rows(f, v)[0].node->node, "node-b");
  v.sort = FleetTopColumn::kNode;
  v.filter = "user:bob";  // node-b (bob's pod) and node-c (down: never left out by its processes)
  v.expanded = {"node-b:9467"};
  rows = fleet_top_rows(f, v);
  ASSERT_EQ(rows.size(), 4u);  // node-b, its GPU 1, pid 300, node-c
  EXPECT_EQ(rows[2].process->pid, 300);
  EXPECT_EQ(rows[3].node->node, "node-c");
  v.filter = "node:node-a";
  EXPECT_EQ(fleet_top_rows(f, v).size(), 1u);
  EXPECT_EQ(fleet_top_filter_error("pid:x").value_or(""), "filter 'pid:x': a pid is a number (pid:1234)");
  EXPECT_TRUE(fleet_top_filter_error("user:").has_value());
  EXPECT_FALSE(fleet_top_filter_error("train").has_value());
  v.filter = "node:nothing-like-it";
  EXPECT_NE(text(render_fleet_top(f, v, at(0), 80, 24)).find("no node matches node:nothing-like-it"), std::string::npos);
  v.filter = "nothing-like-it";  // text: node-c, down, stays (what its processes were is unknown)
  rows = fleet_top_rows(f, v);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].node->node, "node-c");
}

TEST(FleetTopView, OnceIsEveryNodeExpandedWithoutEscapesAndAsciiWithoutUtf8) {
  FleetTopFrame f = fleet_frame();
  FleetTopView v;
  v.utf8 = false;
  std::string once = fleet_top_once(*f.answer, v, 80, false);
  EXPECT_NE(once.find("pid 100  cuda:0  alice  job 77 rank 0"), std::string::npos) << once;
  EXPECT_NE(once.find("pid 300  cuda:?  bob"), std::string::npos) << once;
  EXPECT_EQ(once.find('\033'), std::string::npos);
  for (char c : once) EXPECT_EQ(static_cast<unsigned char>(c) & 0x80, 0) << once;
  EXPECT_NE(once.find("- node-a"), std::string::npos) << once;  // the expanded marker in ASCII
}

TEST(FleetTopView, ProcessesNotListedAreCountedAndSaid) {
  FleetTopFrame f = fleet_frame();
  FleetAnswer a = *f.answer;
  a.listed = FleetProcessList::kWithFindings;  // --processes with-findings, or auto past 2 000
  a.nodes[0].gpus[0].process_count = 40;       // node-a's GPU 0: 40 processes, pid 100 listed
  f.answer = std::make_shared<const FleetAnswer>(a);
  FleetTopView v;
  v.expanded = {"node-a:9467"};
  std::vector<TopLine> lines = render_fleet_top(f, v, at(0), 120, 30);
  std::string all = text(lines);
  EXPECT_NE(all.find("40 processes, 1 with findings listed"), std::string::npos) << all;
  EXPECT_NE(line_with(lines, "node-a").find(" 41 "), std::string::npos) << all;  // 40 on GPU 0, 1 on GPU 1
  EXPECT_NE(all.find("only the processes with findings listed (--processes all)"), std::string::npos) << all;
}

}  // namespace
}  // namespace gpumap
