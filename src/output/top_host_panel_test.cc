// The host panel of `gpumap top`: the machine's CPU, memory, swap, load and uptime above the GPUs,
// from the second read on, folded away on small screens.
#include <fstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/text.h"
#include "os/proc.h"
#include "output/style.h"
#include "output/top_view.h"
#include "session/top.h"

namespace gpumap {
namespace {

using testing::FakeSession;

HostCounters counters(uint64_t busy, uint64_t total) {
  HostCounters h;
  h.cpu = HostCounters::Cpu{busy, total};
  h.cores = {{busy / 2, total / 2}, {busy / 2, total / 2}};
  h.mem_total_kib = 64ull * 1024 * 1024;
  h.mem_available_kib = 48ull * 1024 * 1024;
  h.swap_total_kib = 8ull * 1024 * 1024;
  h.swap_free_kib = 8ull * 1024 * 1024;
  h.load1 = 1.02;
  h.load5 = 0.88;
  h.load15 = 0.70;
  h.uptime_s = 3 * 86400 + 4 * 3600 + 12 * 60;
  return h;
}

TEST(TopHostPanel, CpuUseIsOverTheTimeBetweenTwoReads) {
  HostCounters a = counters(100, 1000), b = counters(400, 2000);
  TopHostPanel first = host_panel_of(a, nullptr);
  EXPECT_FALSE(first.cpu_percent);  // one read says no rate
  EXPECT_EQ(first.mem_used_kib, 16ull * 1024 * 1024);
  TopHostPanel p = host_panel_of(b, &a);
  ASSERT_TRUE(p.cpu_percent);
  EXPECT_DOUBLE_EQ(*p.cpu_percent, 30.0);
  ASSERT_EQ(p.core_percent.size(), 2u);
  EXPECT_DOUBLE_EQ(p.core_percent[0], 30.0);
  EXPECT_EQ(p.swap_used_kib, 0u);
}

TEST(TopHostPanel, ShownFrom30LinesWithEachCoreFrom40AndFoldedAwayAt80x24) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 101}, 1000);
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  std::string before80 = top_text(render_top(t, {}, TopView{}, {}, 80, 24), false);
  HostCounters a = counters(100, 1000), b = counters(400, 2000);
  t.host = host_panel_of(b, &a);
  EXPECT_EQ(top_text(render_top(t, {}, TopView{}, {}, 80, 24), false), before80) << "80x24 keeps its rows";
  std::string mid = top_text(render_top(t, {}, TopView{}, {}, 132, 34), false);
  EXPECT_NE(mid.find("CPU"), std::string::npos) << mid;
  EXPECT_NE(mid.find(" 30%  MEM"), std::string::npos) << mid;
  EXPECT_NE(mid.find(" 16.0/64.0G  SWP"), std::string::npos) << mid;
  EXPECT_NE(mid.find("load 1.02 0.88 0.70  up 3d 04:12"), std::string::npos) << mid;
  EXPECT_EQ(mid.find("cores 2 "), std::string::npos) << mid;
  std::string big = top_text(render_top(t, {}, TopView{}, {}, 200, 60), false);
  EXPECT_NE(big.find("cores 2 "), std::string::npos) << big;
  for (const std::string& line : split(big, '\n')) EXPECT_LE(display_width(line), 200u) << line;
}

TEST(TopHostPanel, TheLiveViewReadsItFromTheSecondFrameThroughTheProcSeam) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 101}, 1000);
  std::ofstream(f.proc_root() + "/stat") << "cpu  100 0 0 900 0 0 0 0\ncpu0 100 0 0 900 0 0 0 0\n";
  std::ofstream(f.proc_root() + "/meminfo") << "MemTotal: 1048576 kB\nMemAvailable: 524288 kB\n";
  std::ofstream(f.proc_root() + "/loadavg") << "0.50 0.40 0.30 1/100 4242\n";
  ProcCache cache;
  ProcFs proc(f.proc_root());
  TopFrame first = read_top_frame(f.session(), proc, &cache);
  EXPECT_FALSE(first.host.known()) << "the first frame reads no host counters";
  std::ofstream(f.proc_root() + "/stat") << "cpu  300 0 0 1700 0 0 0 0\ncpu0 300 0 0 1700 0 0 0 0\n";
  TopFrame second = read_top_frame(f.session(), proc, &cache);
  EXPECT_EQ(second.host.mem_used_kib, 524288u);
  EXPECT_DOUBLE_EQ(second.host.load1.value_or(0), 0.5);
  EXPECT_FALSE(second.host.cpu_percent);  // the first counters were read here
  std::ofstream(f.proc_root() + "/stat") << "cpu  500 0 0 2500 0 0 0 0\ncpu0 500 0 0 2500 0 0 0 0\n";
  TopFrame third = read_top_frame(f.session(), proc, &cache);
  ASSERT_TRUE(third.host.cpu_percent);
  EXPECT_DOUBLE_EQ(*third.host.cpu_percent, 20.0);
}

TEST(TopGpuExtras, MemoryBandwidthFanPerformanceStateAndEccWhereTheGpuLineHasRoom) {
  FakeSession f("h200x2");
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  auto snap = std::make_shared<Snapshot>(*t.snapshot);
  ASSERT_EQ(snap->gpus[0].performance_state, 0u);  // the host file's pstate, served by the fake NVML
  snap->gpus[0].utilization_memory = 37;
  snap->gpus[0].fan_speed_percent = 55;
  snap->gpus[0].performance_state = 2;
  snap->gpus[0].ecc_corrected_volatile = 1;
  snap->gpus[0].ecc_uncorrected_volatile = 0;
  t.snapshot = snap;
  std::string wide = top_text(render_top(t, {}, TopView{}, {}, 132, 40), false);
  EXPECT_NE(wide.find("MBW 37%  fan 55%  P2  ECC 1/0"), std::string::npos) << wide;
  // 80 columns, the GPU lines folded: the fields come whole or not at all.
  TopView folded;
  folded.compact_toggled = true;
  for (const std::string& line : split(top_text(render_top(t, {}, folded, {}, 80, 24), false), '\n')) {
    EXPECT_LE(display_width(line), 80u) << line;
    if (line.find("MBW") == std::string::npos) continue;
    EXPECT_NE(line.find("MBW 37%"), std::string::npos) << line;
  }
}

TEST(TopProcessHistory, EnterShowsTheProcesssGpuMemorySmCpuAndRssOverTheSession) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 101, .argv = {"python3", "train.py"}}, 1000);
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  ASSERT_EQ(t.ps.result.rows.size(), 1u);
  TopHistory h;
  for (int i = 0; i < 3; ++i) record_history(h, t);
  ASSERT_EQ(h.processes.count(101), 1u);
  EXPECT_EQ(h.processes[101].gpu_memory_mib.size(), 3u);
  EXPECT_FLOAT_EQ(h.processes[101].gpu_memory_mib.back(), 1000.0f);
  TopView v;
  v.screen = TopView::Screen::kDetail;
  v.detail_pid = 101;
  std::string s = top_text(render_top(t, h, v, {}, 132, 40), false);
  EXPECT_NE(s.find("History (this session"), std::string::npos) << s;
  EXPECT_NE(s.find("GPU mem"), std::string::npos) << s;
  EXPECT_NE(s.find(" 1000MiB  (max 1000MiB)"), std::string::npos) << s;
  EXPECT_NE(s.find("  CPU %"), std::string::npos) << s;
  EXPECT_NE(s.find("  RSS"), std::string::npos) << s;
  EXPECT_NE(s.find("Variables it started with"), std::string::npos) << "the detail stays beside it\n" << s;
  TopFrame gone = t;  // a process that left the GPUs leaves the history
  gone.ps.result.rows.clear();
  record_history(h, gone);
  EXPECT_EQ(h.processes.count(101), 0u);
}

}  // namespace
}  // namespace gpumap
