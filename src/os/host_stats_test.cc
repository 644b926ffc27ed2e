// The host panel's counters from /proc's text (proc(5)'s formats, as Linux 6.1 writes them).
#include "os/host_stats.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli_helpers.h"

namespace gpumap {
namespace {

// /proc/stat of a 2-core machine: user nice system idle iowait irq softirq steal guest guest_nice.
const char* kStat =
    "cpu  1000 10 300 8000 50 5 5 0 0 0\n"
    "cpu0 600 5 150 3900 25 3 2 0 0 0\n"
    "cpu1 400 5 150 4100 25 2 3 0 0 0\n"
    "intr 12345 0 0\nctxt 999\nbtime 1700000000\nprocesses 1234\n";

TEST(HostStats, CpuLinesGiveBusyAndTotalTicksForTheMachineAndEachCore) {
  HostCounters h;
  parse_cpu_stat(kStat, h);
  ASSERT_TRUE(h.cpu);
  EXPECT_EQ(h.cpu->busy, 1000u + 10 + 300 + 5 + 5 + 0);
  EXPECT_EQ(h.cpu->total, h.cpu->busy + 8000 + 50);
  ASSERT_EQ(h.cores.size(), 2u);
  EXPECT_EQ(h.cores[1].busy, 400u + 5 + 150 + 2 + 3);
}

TEST(HostStats, MeminfoAndLoadavg) {
  HostCounters h;
  parse_meminfo("MemTotal:       65536000 kB\nMemFree:         1000000 kB\nMemAvailable:   32768000 kB\n"
                "SwapCached:            0 kB\nSwapTotal:       8388604 kB\nSwapFree:        8388604 kB\n",
                h);
  EXPECT_EQ(h.mem_total_kib, 65536000u);
  EXPECT_EQ(h.mem_available_kib, 32768000u);
  EXPECT_EQ(h.swap_total_kib, 8388604u);
  EXPECT_EQ(h.swap_free_kib, 8388604u);
  parse_loadavg("1.02 0.88 0.70 2/1234 56789\n", h);
  EXPECT_DOUBLE_EQ(*h.load1, 1.02);
  EXPECT_DOUBLE_EQ(*h.load15, 0.70);
}

TEST(HostStats, AFolderLikeProcIsReadAndWhatIsMissingStaysUnknown) {
  std::string dir = testing::temp_dir("host-stats");
  std::ofstream(dir + "/stat") << kStat;
  std::ofstream(dir + "/uptime") << "12345.67 23456.78\n";
  HostCounters h = read_host_counters(dir);
  EXPECT_TRUE(h.cpu);
  EXPECT_DOUBLE_EQ(*h.uptime_s, 12345.67);
  EXPECT_FALSE(h.mem_total_kib);  // no meminfo
  EXPECT_FALSE(h.load1);          // no loadavg
  std::filesystem::remove_all(dir);
  // The real /proc of this machine says all of it.
  HostCounters real = read_host_counters("/proc");
  EXPECT_TRUE(real.cpu && real.mem_total_kib && real.load1 && real.uptime_s);
  EXPECT_FALSE(real.cores.empty());
}

}  // namespace
}  // namespace gpumap
