// The machine's counters from a /proc-like folder (Seams::proc_root: /proc, or a test fixture),
// for `gpumap top`'s host panel: /proc/stat, /proc/meminfo, /proc/loadavg and /proc/uptime.  The
// parsers are pure (text in, values out); a file that cannot be read or parsed leaves its values
// unknown, never an error.
#pragma once
#include <string>
#include <string_view>

#include "model/host_counters.h"

namespace gpumap {

/// The "cpu" and "cpuN" lines of /proc/stat into `out` (proc(5): user nice system idle iowait irq
/// softirq steal; guest time is already in user and nice).
void parse_cpu_stat(std::string_view text, HostCounters& out);
/// MemTotal, MemAvailable, SwapTotal, SwapFree of /proc/meminfo (kB) into `out`.
void parse_meminfo(std::string_view text, HostCounters& out);
/// The three averages of /proc/loadavg into `out`.
void parse_loadavg(std::string_view text, HostCounters& out);

/// Reads the four files under `proc_root`.
HostCounters read_host_counters(const std::string& proc_root);

}  // namespace gpumap
