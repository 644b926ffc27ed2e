#include "model/gpu_fault.h"

#include <cstdio>

namespace gpumap {

namespace {
const std::pair<uint64_t, const char*> kNames[] = {
      {kClockEventGpuIdle, "gpu_idle"},
      {kClockEventApplicationsClocks, "applications_clocks_setting"},
      {kClockEventSwPowerCap, "sw_power_cap"},
      {kClockEventHwSlowdown, "hw_slowdown"},
      {kClockEventSyncBoost, "sync_boost"},
      {kClockEventSwThermal, "sw_thermal_slowdown"},
      {kClockEventHwThermal, "hw_thermal_slowdown"},
      {kClockEventHwPowerBrake, "hw_power_brake_slowdown"},
      {kClockEventDisplayClock, "display_clock_setting"},
};
}  // namespace

std::optional<uint64_t> clock_event_bit(std::string_view name) {
  for (const auto& [v, n] : kNames)
    if (name == n) return v;
  return std::nullopt;
}

std::vector<std::string> clock_event_names(uint64_t reasons) {
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    uint64_t b = uint64_t{1} << bit;
    if (!(reasons & b)) continue;
    const char* name = nullptr;
    for (const auto& [v, n] : kNames)
      if (v == b) name = n;
    if (name) {
      out.emplace_back(name);
    } else {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(b));
      out.emplace_back(buf);
    }
  }
  return out;
}

}  // namespace gpumap
