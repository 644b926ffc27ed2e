// Benchmark: `pick --gpus k` (the pure policy, pick_gpus) on NVSwitch hosts of 16 to 8192
// simulated GPUs, every GPU on one switch fabric with 18 links (so joined to every other by
// 18), as the NVML reader stores it: fabric membership, not pairs.  Prints times and the
// process's peak memory; no assertion (docs/launch.md records the figures).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "resolve/picker.h"

using namespace gpumap;

namespace {

Snapshot nvswitch_host(size_t n) {
  Snapshot s;
  s.gpus.resize(n);
  char uuid[64];
  for (size_t i = 0; i < n; ++i) {
    Gpu& g = s.gpus[i];
    g.nvml_index = static_cast<uint32_t>(i);
    std::snprintf(uuid, sizeof uuid, "GPU-%08zx-0000-4000-8000-%012zx", i, i * 7919);
    g.uuid = uuid;
    g.memory_total_mib = 143771;
    g.memory_used_mib = i % 5;
    g.memory_free_mib = 143771 - i % 5;
    g.utilization_gpu = 0;
    g.processes.emplace();
    g.cpu_affinity = i * 2 < n ? "0-47" : "48-95";
    g.nvswitch_links = 18;
    g.nvswitch_fabric = 0;
  }
  return s;
}

}  // namespace

int main() {
  struct Case {
    size_t gpus, k;
  } cases[] = {{16, 8}, {128, 4}, {1024, 2}, {1024, 8}, {1024, 64}, {1024, 512}, {4096, 2}, {8192, 2}, {16384, 2}};
  std::printf("%-6s %-4s %12s %14s %s\n", "GPUS", "K", "PICK (ms)", "PEAK RSS (MB)", "CHOSEN");
  for (const Case& c : cases) {
    Snapshot s = nvswitch_host(c.gpus);
    std::vector<std::string> visible;
    for (const Gpu& g : s.gpus) visible.push_back(g.uuid);
    PickRequest req;
    req.count = static_cast<int>(c.k);
    auto t0 = std::chrono::steady_clock::now();
    PickResult r = pick_gpus(s, visible, {}, req);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("%-6zu %-4zu %12.1f %14.1f %zu GPUs, %s\n", c.gpus, c.k, ms, static_cast<double>(ru.ru_maxrss) / 1024,
                r.uuids.size(), r.notes.empty() ? "" : r.notes.front().c_str());
  }
  return 0;
}
