// The machine's own counters as /proc gives them (os/host_stats.h reads them; session/top.cc
// turns two reads into the host panel of `gpumap top`): CPU time, memory, swap, load, uptime.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace gpumap {

struct HostCounters {
  /// CPU time in clock ticks from /proc/stat: busy (user, nice, system, irq, softirq, steal) and
  /// all of it (busy + idle + iowait), for the whole machine and for each core.
  struct Cpu {
    uint64_t busy = 0, total = 0;
  };
  std::optional<Cpu> cpu;
  std::vector<Cpu> cores;
  /// /proc/meminfo, KiB: MemTotal, MemAvailable, SwapTotal, SwapFree.
  std::optional<uint64_t> mem_total_kib, mem_available_kib, swap_total_kib, swap_free_kib;
  /// /proc/loadavg: the 1, 5 and 15 minute averages.
  std::optional<double> load1, load5, load15;
  /// /proc/uptime: seconds since boot.
  std::optional<double> uptime_s;
};

}  // namespace gpumap
