#include "driver/nvml_reader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "driver/driver_thread.h"
#include "driver/fault_counters.h"
#include "driver/dynlib.h"
#include "driver/nvml_api.h"
#include "model/error.h"
#include "os/sysfs.h"

namespace gpumap {
namespace {

// GPUMAP_TRACE=1 (DriverSource::trace): time spent in each NVML call, summed, printed to stderr
// (for benchmarks).
struct Trace {
  bool on = false;
  std::map<std::string, double> ms;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void lap(const char* what) {
    if (!on) return;
    auto now = std::chrono::steady_clock::now();
    ms[what] += std::chrono::duration<double, std::milli>(now - t).count();
    t = now;
  }
  ~Trace() {
    if (!on) return;
    for (const auto& [k, v] : ms) std::fprintf(stderr, "gpumap trace: %-40s %8.3f ms\n", k.c_str(), v);
  }
};
thread_local Trace* g_trace = nullptr;  // the current read_snapshot's, on this thread
void lap(const char* what) {
  if (g_trace) g_trace->lap(what);
}

// What the `need` column of GPUMAP_NVML_CALLS (driver/nvml_api.h) means when binding.
#define GPUMAP_NVML_LOOK_UP_required true
#define GPUMAP_NVML_LOOK_UP_optional true
#define GPUMAP_NVML_LOOK_UP_fallback_for(other) (!(other))
#define GPUMAP_NVML_REQUIRED_required true
#define GPUMAP_NVML_REQUIRED_optional false
#define GPUMAP_NVML_REQUIRED_fallback_for(other) false

/// The NVML calls, one function pointer each (nullptr when an optional call is absent), typed by
/// the newest symbol's prototype and bound in the order of GPUMAP_NVML_CALLS.
struct Nvml {
  std::unique_ptr<DynLib> lib;
#define GPUMAP_NVML_MEMBER_(member, need, ret, params, ...) decltype(GPUMAP_NVML_NEWEST(__VA_ARGS__))* member = nullptr;
  GPUMAP_NVML_CALLS(GPUMAP_NVML_MEMBER_)
#undef GPUMAP_NVML_MEMBER_

  /// fake_host: the simulated host file, told to the fake library before anything binds (it
  /// decides which symbols the host file declares missing).
  Nvml(const std::string& path, const std::string& fake_host) : lib(std::make_unique<DynLib>(path)) {
    DynLib& l = *lib;
    if (!fake_host.empty())
      if (auto set_host = reinterpret_cast<void (*)(const char*)>(l.extra_symbol("gpumapFakeSetHost")))
        set_host(fake_host.c_str());
#define GPUMAP_NVML_BIND_(member, need, ret, params, ...)                                                     \
  member = GPUMAP_NVML_LOOK_UP_##need ? l.bind<decltype(GPUMAP_NVML_NEWEST(__VA_ARGS__))>(                  \
                                            {GPUMAP_NVML_NAMES(__VA_ARGS__)}, GPUMAP_NVML_REQUIRED_##need) \
                                      : nullptr;
    GPUMAP_NVML_CALLS(GPUMAP_NVML_BIND_)
#undef GPUMAP_NVML_BIND_
  }

  /// "<library>: <call> returned NVML_ERROR_X (<code>): <the driver's words>", the one wording of
  /// a failed call, in errors and in notes.
  std::string describe(const char* call, nvmlReturn_t rc) const {
    std::string s = lib->name() + ": " + call + " returned " + nvml_error_name(rc) + " (" + std::to_string(rc) + ")";
    if (error_string && rc != 0)
      if (const char* t = error_string(rc)) s += ": " + std::string(t);
    return s;
  }
  /// A note of a failed call, its raw code kept beside the words (`more` is added to them).
  GpuNote failed(const char* call, nvmlReturn_t rc, const std::string& more = "") const {
    return {call, rc, describe(call, rc) + more};
  }
  /// A note of an answer gpumap would not take: "<library>: <call> <what>".
  GpuNote refused(const char* call, nvmlReturn_t rc, const std::string& what) const {
    return {call, rc, lib->name() + ": " + call + " " + what};
  }
};

// Limits on what a broken or hostile driver may claim: counts beyond them are not loop bounds
// or allocation sizes.  Real hosts stay far below (NVSwitch systems: 8-16 GPUs per host, MIG:
// at most 7 devices per GPU).
constexpr unsigned kMaxGpus = 16384;
constexpr unsigned kMaxProcesses = 65536;
constexpr unsigned kMaxMigDevices = 64;

/// A string the driver wrote into `buf`: up to the first NUL, and never past the buffer
/// (a driver may fill it without a terminator).
template <size_t N>
std::string c_text(const char (&buf)[N]) {
  return std::string(buf, strnlen(buf, N));
}

// Records a failed optional query; NOT_SUPPORTED is an ordinary N/A and is not noted.
void note(Gpu& g, const Nvml& n, const char* call, nvmlReturn_t rc) {
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED) g.notes.push_back(n.failed(call, rc));
}

/// The process list, sized by asking first.  `absurd` is set (and the list left empty) when
/// the driver claims more than kMaxProcesses.
template <class Info, class Fn>
nvmlReturn_t read_process_list(Fn* fn, nvmlDevice_t d, std::vector<Info>& out, unsigned& absurd) {
  unsigned n = 0;
  nvmlReturn_t rc = fn(d, &n, nullptr);
  for (int attempt = 0; attempt < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    if (n > kMaxProcesses) {
      absurd = n;
      out.clear();
      return rc;
    }
    n += 8;  // processes may start between the two calls
    out.resize(n);
    unsigned room = n;
    rc = fn(d, &n, out.data());
    if (rc == NVML_SUCCESS && n > room) n = room;  // never trust a count past the buffer
  }
  if (rc == NVML_SUCCESS) out.resize(std::min<size_t>(n, out.size()));
  else out.clear();
  return rc;
}

/// Adds one of the two lists (compute, graphics) to g.processes.  Returns false when the list
/// could not be read: the caller then leaves the whole process list unknown, never a half.
/// `list` is the versioned call (_v3 or _v2), `v1` the unversioned one with its older struct.
bool add_processes(Gpu& g, const Nvml& n, nvmlDevice_t d, const char* type, decltype(Nvml::compute) list,
                   decltype(Nvml::compute_v1) v1, const char* call) {
  nvmlReturn_t rc;
  std::vector<GpuProcess> found;
  auto add = [&](unsigned pid, unsigned long long mem) {
    GpuProcess p;
    p.pid = pid;
    p.type = type;
    if (mem != kNvmlValueNotAvailable) p.used_memory_mib = mem >> 20;
    found.push_back(p);
  };
  unsigned absurd = 0;
  if (list) {
    std::vector<nvmlProcessInfo_v2_t> infos;
    rc = read_process_list(list, d, infos, absurd);
    for (const auto& i : infos) add(i.pid, i.usedGpuMemory);
  } else if (v1) {
    std::vector<nvmlProcessInfo_v1_t> infos;
    rc = read_process_list(v1, d, infos, absurd);
    for (const auto& i : infos) add(i.pid, i.usedGpuMemory);
  } else {
    return true;
  }
  if (absurd) {
    g.notes.push_back(n.refused(call, rc, "claimed " + std::to_string(absurd) + " processes (more than " +
                                              std::to_string(kMaxProcesses) + "): process list unknown"));
    return false;
  }
  if (rc != NVML_SUCCESS) {
    note(g, n, call, rc);
    return rc == NVML_ERROR_NOT_SUPPORTED;
  }
  if (!g.processes) g.processes.emplace();
  g.processes->insert(g.processes->end(), found.begin(), found.end());
  return true;
}

/// The sensors a monitor shows (ReadOptions::sensors): each call optional, each value N/A when
/// the driver says NOT_SUPPORTED (not noted) or fails (noted with its code).
void read_sensors(Gpu& g, const Nvml& n, nvmlDevice_t d) {
  nvmlReturn_t rc;
  unsigned u = 0;
  if (n.temperature) {
    if ((rc = n.temperature(d, kNvmlTemperatureGpu, &u)) == NVML_SUCCESS) g.temperature_c = u;
    else note(g, n, "nvmlDeviceGetTemperature", rc);
  }
  if (n.power_usage) {  // milliwatts
    if ((rc = n.power_usage(d, &u)) == NVML_SUCCESS) g.power_draw_w = u / 1000.0;
    else note(g, n, "nvmlDeviceGetPowerUsage", rc);
  }
  if (n.power_limit) {
    if ((rc = n.power_limit(d, &u)) == NVML_SUCCESS) g.power_limit_w = u / 1000.0;
    else note(g, n, "nvmlDeviceGetPowerManagementLimit", rc);
  }
  if (n.enforced_power_limit) {
    if ((rc = n.enforced_power_limit(d, &u)) == NVML_SUCCESS) g.enforced_power_limit_w = u / 1000.0;
    else note(g, n, "nvmlDeviceGetEnforcedPowerLimit", rc);
  }
  if (n.clock) {
    if ((rc = n.clock(d, kNvmlClockSm, &u)) == NVML_SUCCESS) g.clock_sm_mhz = u;
    else note(g, n, "nvmlDeviceGetClockInfo", rc);
    if ((rc = n.clock(d, kNvmlClockMem, &u)) == NVML_SUCCESS) g.clock_memory_mhz = u;
    else note(g, n, "nvmlDeviceGetClockInfo", rc);
  }
  if (n.fan) {
    if ((rc = n.fan(d, &u)) == NVML_SUCCESS) g.fan_speed_percent = u;
    else note(g, n, "nvmlDeviceGetFanSpeed", rc);
  }
  if (n.pstate) {
    int p = kNvmlPstateUnknown;
    if ((rc = n.pstate(d, &p)) == NVML_SUCCESS) {
      if (p >= 0 && p <= 15) g.performance_state = static_cast<uint32_t>(p);  // 32: NVML_PSTATE_UNKNOWN
    } else {
      note(g, n, "nvmlDeviceGetPerformanceState", rc);
    }
  }
  if (n.ecc) {
    unsigned long long c = 0;
    if ((rc = n.ecc(d, kNvmlEccCorrected, kNvmlEccVolatile, &c)) == NVML_SUCCESS) g.ecc_corrected_volatile = c;
    else note(g, n, "nvmlDeviceGetTotalEccErrors", rc);
    if (rc != NVML_ERROR_NOT_SUPPORTED) {  // ECC off: one NOT_SUPPORTED says it for both
      if ((rc = n.ecc(d, kNvmlEccUncorrected, kNvmlEccVolatile, &c)) == NVML_SUCCESS) g.ecc_uncorrected_volatile = c;
      else note(g, n, "nvmlDeviceGetTotalEccErrors", rc);
    }
  }
}

/// How far back a process's utilisation sample may be and still count as its current one.
constexpr unsigned long long kProcessSampleWindowUs = 2'000'000;
/// The period asked for: samples since this long ago (the driver averages over it).
constexpr unsigned long long kProcessSincePeriodUs = 1'000'000;

/// Each listed process's SM and memory utilisation (ReadOptions::process_utilization), from the
/// newer nvmlDeviceGetProcessesUtilizationInfo (R550+) or, where it is absent or refuses,
/// nvmlDeviceGetProcessUtilization.  NVML returns a sample only for a process that did some work
/// in the last sample period (nvml.h), and NOT_FOUND when none did: a listed process without a
/// sample is at 0%.  Left N/A when neither call answers.
void read_process_utilization(Gpu& g, const Nvml& n, nvmlDevice_t d) {
  if (!g.processes || g.processes->empty()) return;
  struct Sample {
    unsigned pid;
    unsigned long long ts;
    unsigned sm, mem;
  };
  std::vector<Sample> samples;
  // Samples since one second ago: the driver averages a process's samples since lastSeenTimeStamp,
  // so 0 (everything it holds) answers the average over its whole buffer, which trails a process
  // that just got busy (docs/driver-rules.md, "Per-process utilisation"; nvitop asks the same way).
  auto now_us = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  const unsigned long long since = now_us > kProcessSincePeriodUs ? now_us - kProcessSincePeriodUs : 0;
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  const char* call = "nvmlDeviceGetProcessUtilization";
  if (n.process_util_info) {
    call = "nvmlDeviceGetProcessesUtilizationInfo";
    nvmlProcessesUtilizationInfo_v1_t info{};
    info.version = kNvmlProcessesUtilizationInfoV1;
    info.lastSeenTimeStamp = since;
    rc = n.process_util_info(d, &info);
    std::vector<nvmlProcessUtilizationInfo_v1_t> buf;
    for (int attempt = 0; attempt < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
      if (info.processSamplesCount > kMaxProcesses) break;
      buf.assign(info.processSamplesCount + 8, nvmlProcessUtilizationInfo_v1_t{});
      info.version = kNvmlProcessesUtilizationInfoV1;
      info.lastSeenTimeStamp = since;
      info.processSamplesCount = static_cast<unsigned>(buf.size());
      info.procUtilArray = buf.data();
      rc = n.process_util_info(d, &info);
    }
    if (rc == NVML_SUCCESS)
      for (unsigned i = 0; i < std::min<size_t>(info.processSamplesCount, buf.size()); ++i)
        samples.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil});
  }
  // The older call where the newer is absent, or this driver refuses it (a struct version it
  // does not know, or not supported on this GPU).
  if (n.process_util && (rc == NVML_ERROR_FUNCTION_NOT_FOUND || rc == NVML_ERROR_NOT_SUPPORTED ||
                         rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH || rc == NVML_ERROR_INVALID_ARGUMENT)) {
    call = "nvmlDeviceGetProcessUtilization";
    unsigned count = 0;
    rc = n.process_util(d, nullptr, &count, since);
    std::vector<nvmlProcessUtilizationSample_t> buf;
    for (int attempt = 0; attempt < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
      if (count > kMaxProcesses) break;
      buf.assign(count + 8, nvmlProcessUtilizationSample_t{});
      count = static_cast<unsigned>(buf.size());
      rc = n.process_util(d, buf.data(), &count, since);
    }
    if (rc == NVML_SUCCESS)
      for (unsigned i = 0; i < std::min<size_t>(count, buf.size()); ++i)
        samples.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil});
  }
  if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) return;  // neither call bound
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND) {
    note(g, n, call, rc);
    return;
  }
  // The newest sample of each process, and only samples of the last window: the timestamps are
  // the CPU's, microseconds since the epoch; where they are not (a clock far off), the window
  // ends at the newest sample instead.
  unsigned long long newest = 0;
  for (const Sample& x : samples) newest = std::max(newest, x.ts);
  unsigned long long end = newest > now_us - 86'400'000'000ull && newest < now_us + 86'400'000'000ull ? now_us : newest;
  unsigned long long from = end > kProcessSampleWindowUs ? end - kProcessSampleWindowUs : 0;
  for (GpuProcess& p : *g.processes) {
    const Sample* best = nullptr;
    for (const Sample& x : samples)
      if (x.pid == p.pid && x.ts >= from && (!best || x.ts > best->ts)) best = &x;
    p.sm_utilization = best ? std::min(best->sm, 100u) : 0;
    p.memory_utilization = best ? std::min(best->mem, 100u) : 0;
  }
}

std::string cpu_list(const unsigned long* set, unsigned words) {
  std::string out;
  unsigned bits = words * 64;
  for (unsigned c = 0; c < bits;) {
    if (!(set[c / 64] & (1ul << (c % 64)))) {
      ++c;
      continue;
    }
    unsigned e = c;
    while (e + 1 < bits && (set[(e + 1) / 64] & (1ul << ((e + 1) % 64)))) ++e;
    out += (out.empty() ? "" : ",") + std::to_string(c) + (e > c ? "-" + std::to_string(e) : "");
    c = e + 1;
  }
  return out;
}

void read_gpu(Nvml& n, unsigned index, const ReadOptions& opt, bool simulated, const std::string& sysfs_root, Gpu& g,
              std::vector<std::string>& link_pcis, nvmlDevice_t& d) {
  g.nvml_index = index;
  d = nullptr;
  lap("(other)");
  nvmlReturn_t rc = n.handle(index, &d);
  lap("nvmlDeviceGetHandleByIndex");
  if (rc != NVML_SUCCESS) {
    g.notes.push_back(n.failed("nvmlDeviceGetHandleByIndex", rc));
    return;
  }
  char buf[96] = {};
  if ((rc = n.uuid(d, buf, sizeof buf)) == NVML_SUCCESS) g.uuid = c_text(buf);
  else note(g, n, "nvmlDeviceGetUUID", rc);
  lap("nvmlDeviceGetUUID");
  if ((rc = n.name(d, buf, sizeof buf)) == NVML_SUCCESS) g.name = c_text(buf);
  else note(g, n, "nvmlDeviceGetName", rc);
  lap("nvmlDeviceGetName");
  nvmlPciInfo_t pci{};
  if ((rc = n.pci(d, &pci)) == NVML_SUCCESS) {
    g.pci_bus_id = c_text(pci.busId);
    g.pci = parse_pci_address(g.pci_bus_id);
  } else {
    note(g, n, "nvmlDeviceGetPciInfo", rc);
  }
  lap("nvmlDeviceGetPciInfo");
  unsigned u;
  if (n.minor) {
    if ((rc = n.minor(d, &u)) == NVML_SUCCESS) g.minor_number = u;
    else note(g, n, "nvmlDeviceGetMinorNumber", rc);
  }
  lap("nvmlDeviceGetMinorNumber");
  bool have_mem = false;
  if (n.mem2) {
    nvmlMemory_v2_t m{};
    m.version = kNvmlMemoryV2Version;
    if ((rc = n.mem2(d, &m)) == NVML_SUCCESS) {
      g.memory_total_mib = m.total >> 20;
      g.memory_used_mib = m.used >> 20;
      g.memory_free_mib = m.free >> 20;
      have_mem = true;
    }
  }
  if (!have_mem && n.mem) {
    nvmlMemory_t m{};
    if ((rc = n.mem(d, &m)) == NVML_SUCCESS) {
      g.memory_total_mib = m.total >> 20;
      g.memory_used_mib = m.used >> 20;
      g.memory_free_mib = m.free >> 20;
    } else {
      note(g, n, "nvmlDeviceGetMemoryInfo", rc);
    }
  }
  lap("nvmlDeviceGetMemoryInfo");
  if (opt.utilization && n.util) {
    nvmlUtilization_t ut{};
    if ((rc = n.util(d, &ut)) == NVML_SUCCESS) {
      g.utilization_gpu = ut.gpu;
      g.utilization_memory = ut.memory;
    } else {
      note(g, n, "nvmlDeviceGetUtilizationRates", rc);
    }
    lap("nvmlDeviceGetUtilizationRates");
  }
  if (opt.sensors) {
    read_sensors(g, n, d);
    lap("sensors (temperature, power, clocks, fan, pstate, ECC)");
  }
  if (n.cc) {
    int major = 0, minor = 0;
    if ((rc = n.cc(d, &major, &minor)) == NVML_SUCCESS)
      g.compute_capability = std::to_string(major) + "." + std::to_string(minor);
    else note(g, n, "nvmlDeviceGetCudaComputeCapability", rc);
  }
  lap("nvmlDeviceGetCudaComputeCapability");
  if (n.mig_mode) {
    unsigned cur = 0, pend = 0;
    if ((rc = n.mig_mode(d, &cur, &pend)) == NVML_SUCCESS) g.mig_enabled = cur == 1;
    else note(g, n, "nvmlDeviceGetMigMode", rc);
  }
  lap("nvmlDeviceGetMigMode");
  if (opt.mig && g.mig_enabled.value_or(false) && n.mig_max && n.mig_handle) {
    unsigned max = 0;
    if ((rc = n.mig_max(d, &max)) == NVML_SUCCESS) {
      if (max > kMaxMigDevices) {
        g.notes.push_back(n.refused("nvmlDeviceGetMaxMigDeviceCount", rc,
                                    "claimed " + std::to_string(max) + " (more than " + std::to_string(kMaxMigDevices) +
                                        "): reading the first " + std::to_string(kMaxMigDevices)));
        max = kMaxMigDevices;
      }
      for (unsigned i = 0; i < max; ++i) {
        nvmlDevice_t md;
        if (n.mig_handle(d, i, &md) != NVML_SUCCESS) continue;
        MigDevice m;
        std::fill(std::begin(buf), std::end(buf), '\0');
        if ((rc = n.uuid(md, buf, sizeof buf)) != NVML_SUCCESS) {  // without its UUID nothing can name it
          g.notes.push_back(n.failed("nvmlDeviceGetUUID", rc, " for MIG device " + std::to_string(i) + ": left out"));
          continue;
        }
        m.uuid = c_text(buf);
        std::fill(std::begin(buf), std::end(buf), '\0');
        if (n.name(md, buf, sizeof buf) == NVML_SUCCESS) m.name = c_text(buf);  // "<GPU> MIG 3g.40gb": the profile
        if (n.gi_id && n.gi_id(md, &u) == NVML_SUCCESS) m.gpu_instance_id = u;
        if (n.ci_id && n.ci_id(md, &u) == NVML_SUCCESS) m.compute_instance_id = u;
        nvmlMemory_t mm{};
        if (n.mem && n.mem(md, &mm) == NVML_SUCCESS) {
          m.memory_total_mib = mm.total >> 20;
          m.memory_used_mib = mm.used >> 20;
        }
        g.mig_devices.push_back(m);
      }
    }
  }
  if (opt.processes) {
    // Both lists, then the verdict: a compute list that failed stays unknown even when the
    // graphics list answers (it used to become an empty, "idle", list: issue 20).
    bool compute = add_processes(g, n, d, "compute", n.compute, n.compute_v1,
                                 "nvmlDeviceGetComputeRunningProcesses");
    bool graphics = add_processes(g, n, d, "graphics", n.graphics, n.graphics_v1,
                                  "nvmlDeviceGetGraphicsRunningProcesses");
    if (!compute || !graphics) g.processes.reset();
    lap("nvmlDevice*RunningProcesses");
    if (opt.process_utilization) {
      read_process_utilization(g, n, d);
      lap("nvmlDeviceGetProcess*Utilization*");
    }
  }
  if (opt.topology && !simulated && g.pci) {
    // Measured (H200 x2, driver 580): nvmlDeviceGetCpuAffinity costs about 7.5 ms per GPU and
    // gave the same CPUs as sysfs's local_cpulist, which costs microseconds: sysfs first.
    g.cpu_affinity = pci_local_cpulist(sysfs_root, *g.pci);
    lap("sysfs local_cpulist");
  }
  if (opt.topology && !g.cpu_affinity && n.affinity) {
    unsigned long set[16] = {};
    if ((rc = n.affinity(d, 16, set)) == NVML_SUCCESS) g.cpu_affinity = cpu_list(set, 16);
    else note(g, n, "nvmlDeviceGetCpuAffinity", rc);
    lap("nvmlDeviceGetCpuAffinity");
  }
  if (opt.nvlink && n.link_state && n.link_pci) {
    // Measured (H200 x2, driver 580): both GPUs' 18 links end at NVSwitches, whose "PCI bus
    // id" reads FFFFFFFF:FF:FF.0; only links whose far end is a GPU name their peer.
    uint32_t to_switch = 0;
    for (unsigned link = 0; link < kNvmlMaxNvLinks; ++link) {
      int active = 0;
      if (n.link_state(d, link, &active) != NVML_SUCCESS) break;
      if (!active) continue;
      int type = kNvLinkRemoteGpu;
      if (n.link_type && n.link_type(d, link, &type) != NVML_SUCCESS) type = kNvLinkRemoteGpu;
      if (type == kNvLinkRemoteSwitch) {
        ++to_switch;
        continue;
      }
      nvmlPciInfo_t rp{};
      if (n.link_pci(d, link, &rp) == NVML_SUCCESS) link_pcis.push_back(c_text(rp.busId));
    }
    g.nvswitch_links = to_switch;
    lap("nvmlDeviceGetNvLink*");
  }
}

Snapshot read_unbounded(const DriverSource& src, const ReadOptions& opt) {
  Trace trace;
  trace.on = src.trace;
  g_trace = &trace;
  struct Reset {
    ~Reset() { g_trace = nullptr; }
  } reset;
  Nvml n(src.nvml_library, src.simulated ? src.host_file : "");
  lap("dlopen + dlsym");
  nvmlReturn_t rc = n.init();
  lap("nvmlInit");
  if (rc != NVML_SUCCESS)
    throw Error(kExitNoDriver, n.describe(n.lib->bindings().front().bound.c_str(), rc),
                rc == NVML_ERROR_DRIVER_NOT_LOADED ? "the NVIDIA kernel driver is not loaded (is this a GPU machine?)"
                                                   : "");
  Snapshot s;
  s.simulated = src.simulated;
  s.sensors_read = opt.sensors;
  s.process_utilization_read = opt.processes && opt.process_utilization;
  s.source = src.simulated ? "simulated host " + src.host_file : "NVML (" + src.nvml_library + ")";
  char buf[96] = {};
  if (n.driver_version && n.driver_version(buf, sizeof buf) == NVML_SUCCESS) s.driver_version = c_text(buf);
  int v;
  if (n.cuda_version && n.cuda_version(&v) == NVML_SUCCESS) s.cuda_driver_version = v;
  unsigned count = 0;
  if ((rc = n.count(&count)) != NVML_SUCCESS) {
    n.shutdown();
    throw Error(kExitError, n.describe("nvmlDeviceGetCount", rc));
  }
  if (count > kMaxGpus)
    throw Error(kExitError, n.lib->name() + ": nvmlDeviceGetCount claimed " + std::to_string(count) +
                                " GPUs (more than " + std::to_string(kMaxGpus) + "): the driver library is broken");
  std::vector<std::vector<std::string>> links(count);
  std::vector<nvmlDevice_t> handles(count, nullptr);
  s.gpus.resize(count);
  // NVML is documented thread-safe, and some queries wait on the GPU (measured on H200,
  // driver 580: about 7 ms per GPU for the first handle, 3.7 ms for utilisation): read the
  // GPUs in parallel.  Sequential when tracing, so the per-call times stay meaningful.
  if (trace.on || count < 2) {
    for (unsigned i = 0; i < count; ++i) read_gpu(n, i, opt, src.simulated, src.sysfs_root, s.gpus[i], links[i], handles[i]);
  } else {
    std::atomic<unsigned> next{0};
    auto work = [&] {
      for (unsigned i; (i = next++) < count;) read_gpu(n, i, opt, src.simulated, src.sysfs_root, s.gpus[i], links[i], handles[i]);
    };
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < std::min(count, 8u); ++t) workers.emplace_back(work);
    work();
    for (std::thread& t : workers) t.join();
  }
  // NVLink peers: active links whose remote end is another GPU of this host, counted per peer.
  std::vector<std::vector<std::pair<unsigned, uint32_t>>> peers(count);  // (peer nvml index, links)
  for (unsigned i = 0; i < count; ++i)
    for (const std::string& remote : links[i]) {
      auto a = parse_pci_address(remote);
      for (const Gpu& peer : s.gpus)
        if (a && peer.pci && *peer.pci == *a && peer.nvml_index != i) peers[i].emplace_back(peer.nvml_index, 1);
    }
  // Through NVSwitches: GPUs on one switch fabric reach each other over NVLink, which the
  // driver's P2P status says; a pair gets min(links), what `nvidia-smi topo -m` prints as NV<n>
  // (Snapshot::nvlinks_between).  Stored as fabric membership, not pairs: one P2P question per
  // GPU and fabric found (a pair per GPU pair grew as the square of the GPU count: 7.6 GB and
  // 45 s for `pick --gpus 2` on 8 192 simulated GPUs).
  if (opt.nvlink && n.p2p) {
    std::vector<unsigned> first_of_fabric;  // one GPU of each fabric found so far
    for (unsigned i = 0; i < count; ++i) {
      if (!s.gpus[i].nvswitch_links.value_or(0) || !handles[i]) continue;
      for (size_t f = 0; f < first_of_fabric.size() && !s.gpus[i].nvswitch_fabric; ++f) {
        int status = -1;
        if (n.p2p(handles[i], handles[first_of_fabric[f]], kNvmlP2pCapsNvlink, &status) == NVML_SUCCESS &&
            status == kNvmlP2pStatusOk)
          s.gpus[i].nvswitch_fabric = static_cast<uint32_t>(f);
      }
      if (!s.gpus[i].nvswitch_fabric) {
        s.gpus[i].nvswitch_fabric = static_cast<uint32_t>(first_of_fabric.size());
        first_of_fabric.push_back(i);
      }
    }
    lap("nvmlDeviceGetP2PStatus");
  }
  for (unsigned i = 0; i < count; ++i) {
    std::sort(peers[i].begin(), peers[i].end());
    for (size_t k = 0; k < peers[i].size(); ++k) {
      auto [peer, n_links] = peers[i][k];
      std::vector<NvLinkPeer>& out = s.gpus[i].nvlink_peers;
      if (k > 0 && peers[i][k - 1].first == peer) out.back().links += n_links;
      else out.push_back({s.gpus[peer].uuid, n_links, peer});
    }
  }
  for (const SymbolBinding& b : n.lib->bindings())
    if (!b.bound.empty()) s.bindings.push_back(b.bound);
  // No nvmlShutdown: it costs about 6 ms (measured, driver 580) and frees nothing that the
  // process's exit does not; gpumap reads the snapshot once.
  lap("(other)");
  return s;
}

/// One GPU's fault counters (driver/fault_counters.h): each call optional, NOT_SUPPORTED an N/A.
void read_counters(const Nvml& n, nvmlDevice_t d, GpuFaultCounters& c) {
  auto failed = [&](const char* call, nvmlReturn_t rc) {
    if (rc == NVML_ERROR_GPU_IS_LOST) c.lost = true;
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED) c.notes.push_back(n.describe(call, rc));
  };
  nvmlReturn_t rc;
  char buf[96] = {};
  if ((rc = n.uuid(d, buf, sizeof buf)) == NVML_SUCCESS) c.uuid = c_text(buf);
  else failed("nvmlDeviceGetUUID", rc);
  if (n.ecc) {
    struct Ecc {
      int error, counter;
      std::optional<uint64_t>& out;
    } eccs[] = {{kNvmlEccCorrected, kNvmlEccVolatile, c.ecc_corrected_volatile},
                {kNvmlEccUncorrected, kNvmlEccVolatile, c.ecc_uncorrected_volatile},
                {kNvmlEccCorrected, kNvmlEccAggregate, c.ecc_corrected_aggregate},
                {kNvmlEccUncorrected, kNvmlEccAggregate, c.ecc_uncorrected_aggregate}};
    for (Ecc& e : eccs) {
      unsigned long long v = 0;
      if ((rc = n.ecc(d, e.error, e.counter, &v)) == NVML_SUCCESS) e.out = v;
      else failed("nvmlDeviceGetTotalEccErrors", rc);
      if (rc == NVML_ERROR_GPU_IS_LOST) break;
    }
  }
  if (n.retired_pages) {
    for (auto [cause, out] : {std::pair{kNvmlRetiredSbe, &c.retired_pages_sbe}, std::pair{kNvmlRetiredDbe, &c.retired_pages_dbe}}) {
      unsigned count = 0;  // 0 and no buffer: the count only (nvml.h)
      rc = n.retired_pages(d, cause, &count, nullptr);
      if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) *out = count;
      else failed("nvmlDeviceGetRetiredPages", rc);
    }
  }
  if (n.retired_pending) {
    int pending = 0;
    if ((rc = n.retired_pending(d, &pending)) == NVML_SUCCESS) c.retired_pages_pending = pending != 0;
    else failed("nvmlDeviceGetRetiredPagesPendingStatus", rc);
  }
  if (n.remapped_rows) {
    unsigned corr = 0, unc = 0, pending = 0, failure = 0;
    if ((rc = n.remapped_rows(d, &corr, &unc, &pending, &failure)) == NVML_SUCCESS) {
      c.remapped_rows_correctable = corr;
      c.remapped_rows_uncorrectable = unc;
      c.remapped_rows_pending = pending != 0;
      c.remapped_rows_failed = failure != 0;
    } else {
      failed("nvmlDeviceGetRemappedRows", rc);
    }
  }
  if (n.clock_events) {
    unsigned long long reasons = 0;
    if ((rc = n.clock_events(d, &reasons)) == NVML_SUCCESS) c.clock_event_reasons = reasons;
    else failed("nvmlDeviceGetCurrentClocksEventReasons", rc);
  }
  if (n.pcie_replay) {
    unsigned v = 0;
    if ((rc = n.pcie_replay(d, &v)) == NVML_SUCCESS) c.pcie_replay_count = v;
    else failed("nvmlDeviceGetPcieReplayCounter", rc);
  }
}

std::vector<GpuFaultCounters> read_counters_unbounded(const DriverSource& src) {
  Nvml n(src.nvml_library, src.simulated ? src.host_file : "");
  nvmlReturn_t rc = n.init();
  if (rc != NVML_SUCCESS)
    throw Error(kExitNoDriver, n.describe(n.lib->bindings().front().bound.c_str(), rc),
                rc == NVML_ERROR_DRIVER_NOT_LOADED ? "the NVIDIA kernel driver is not loaded (is this a GPU machine?)" : "");
  unsigned count = 0;
  if ((rc = n.count(&count)) != NVML_SUCCESS) throw Error(kExitError, n.describe("nvmlDeviceGetCount", rc));
  if (count > kMaxGpus)
    throw Error(kExitError, n.lib->name() + ": nvmlDeviceGetCount claimed " + std::to_string(count) + " GPUs (more than " +
                                std::to_string(kMaxGpus) + "): the driver library is broken");
  std::vector<GpuFaultCounters> out(count);
  for (unsigned i = 0; i < count; ++i) {
    out[i].nvml_index = i;
    nvmlDevice_t d = nullptr;
    if ((rc = n.handle(i, &d)) != NVML_SUCCESS) {
      if (rc == NVML_ERROR_GPU_IS_LOST) out[i].lost = true;
      out[i].notes.push_back(n.describe("nvmlDeviceGetHandleByIndex", rc));
      continue;
    }
    read_counters(n, d, out[i]);
  }
  return out;
}

}  // namespace

std::vector<GpuFaultCounters> read_fault_counters(const DriverSource& src) {
  if (src.driver_timeout_s <= 0) return read_counters_unbounded(src);
  struct Shared {
    std::vector<GpuFaultCounters> counters;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  bool answered = run_on_driver_thread(DriverLane::kNvml,
      [shared, src] {
        try {
          shared->counters = read_counters_unbounded(src);
        } catch (...) {
          shared->error = std::current_exception();
        }
      },
      std::chrono::duration<double>(src.driver_timeout_s));
  if (!answered)
    throw driver_timeout_error(src, "the NVIDIA driver (" + src.nvml_library + ")", "a hung GPU query (a lost GPU?)");
  if (shared->error) std::rethrow_exception(shared->error);
  return std::move(shared->counters);
}

Snapshot read_snapshot(const DriverSource& src, const ReadOptions& opt) {
  if (src.driver_timeout_s <= 0) return read_unbounded(src, opt);
  // A hung driver call (nvmlInit on a wedged GPU, a lost GPU's query) must not hang gpumap:
  // read on the NVML driver thread and give up at the deadline.  The job owns what it uses.
  struct Shared {
    std::optional<Snapshot> snapshot;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  bool answered = run_on_driver_thread(DriverLane::kNvml,
      [shared, src, opt] {
        try {
          shared->snapshot = read_unbounded(src, opt);
        } catch (...) {
          shared->error = std::current_exception();
        }
      },
      std::chrono::duration<double>(src.driver_timeout_s));
  if (!answered)
    throw driver_timeout_error(src, "the NVIDIA driver (" + src.nvml_library + ")", "a hung nvmlInit or GPU query");
  // Answered: the job is done and nothing else touches `shared` (run() saw it finish under the lock).
  if (shared->error) std::rethrow_exception(shared->error);
  return std::move(*shared->snapshot);
}

}  // namespace gpumap
