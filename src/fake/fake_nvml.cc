// A fake libnvidia-ml.so.1 that serves the simulated host gpumap names through
// gpumapFakeSetHost() (or, for other loaders, $GPUMAP_FAKE_HOST).
// It follows NVML's documented contract for each call gpumap makes (return codes,
// INSUFFICIENT_SIZE sizing, versioned structs) and nothing more.  Built twice: sim/ has
// every symbol, sim-legacy/ (FAKE_LEGACY) only the unversioned ones of older drivers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "driver/nvml_api.h"
#include "fake/serving.h"

using gpumap::SimGpu;
using gpumap::SimHost;

namespace {

struct Handle {
  int gpu;
  int mig;  // -1 for the GPU itself
};

std::unique_ptr<SimHost> g_host;
gpumap::fake::FaultPlan g_faults;  // g_host's faults and their call counts
std::unique_ptr<Handle[]> g_handles;  // per GPU, then per MIG device: stable addresses
int g_init_count = 0;
std::string g_host_path;  // set by gpumapFakeSetHost; "" means $GPUMAP_FAKE_HOST
std::string g_loaded_path;  // the file g_host came from

std::string base_name(const char* fn) {
  std::string s(fn);
  size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() && s.find_first_not_of("0123456789", v + 2) == std::string::npos)
    s.resize(v);
  return s;
}

// The malformed answer ("unterminated", "huge_count") the current call must give, if any.
thread_local std::string t_output;

// An injected error for this call (the faults list first, then the errors maps, global or for
// this GPU); NVML_SUCCESS when none.  Sets t_output for a fault that malforms the answer.
int injected(const char* fn, int gpu = -1, int mig = -1) {
  t_output.clear();
  if (!g_host) return NVML_ERROR_UNINITIALIZED;
  std::string b = base_name(fn);
  if (const gpumap::SimFault* f = g_faults.apply(b, gpu, mig)) {
    if (f->error) return f->error;
    t_output = f->output;
  }
  if (auto it = g_host->errors.find(b); it != g_host->errors.end()) return it->second;
  if (gpu >= 0)
    if (auto it = g_host->gpus[gpu].errors.find(b); it != g_host->gpus[gpu].errors.end()) return it->second;
  return NVML_SUCCESS;
}

const Handle* as_handle(nvmlDevice_t d) { return reinterpret_cast<const Handle*>(d); }

int init_impl() {
  const char* path = g_host_path.empty() ? std::getenv("GPUMAP_FAKE_HOST") : g_host_path.c_str();
  if (!path || !*path) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (g_host && g_loaded_path != path) {  // another host in the same process (a library user's tests)
    g_host.reset();
    g_handles.reset();
    g_init_count = 0;
  }
  if (!g_host) {
    g_loaded_path = path;
    try {
      g_host = std::make_unique<SimHost>(gpumap::load_host_file(path));
      g_faults = gpumap::fake::FaultPlan(g_host->faults);
      gpumap::fake::keep_openable_gpus(*g_host);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fake libnvidia-ml: %s\n", e.what());
      return NVML_ERROR_UNKNOWN;
    }
    int rc = NVML_SUCCESS;
    if (auto it = g_host->errors.find("nvmlInit"); it != g_host->errors.end()) rc = it->second;
    if (const gpumap::SimFault* f = g_faults.apply("nvmlInit", -1))
      if (f->error) rc = f->error;
    if (rc != NVML_SUCCESS) {
      g_host.reset();
      return rc;
    }
    size_t n = g_host->gpus.size();
    for (const SimGpu& g : g_host->gpus) n += g.mig_devices.size();
    g_handles = std::make_unique<Handle[]>(n);
    size_t k = g_host->gpus.size();
    for (size_t i = 0; i < g_host->gpus.size(); ++i) {
      g_handles[i] = {static_cast<int>(i), -1};
      for (size_t m = 0; m < g_host->gpus[i].mig_devices.size(); ++m)
        g_handles[k++] = {static_cast<int>(i), static_cast<int>(m)};
    }
  }
  ++g_init_count;
  return NVML_SUCCESS;
}

nvmlDevice_t mig_handle(int gpu, int mig) {
  size_t k = g_host->gpus.size();
  for (int i = 0; i < gpu; ++i) k += g_host->gpus[i].mig_devices.size();
  return reinterpret_cast<nvmlDevice_t>(&g_handles[k + mig]);
}

int copy_string(const std::string& s, char* out, unsigned len) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (t_output == "unterminated") {  // a broken driver: the whole buffer, no terminator
    for (unsigned i = 0; i < len; ++i) out[i] = s.empty() ? 'X' : s[i % s.size()];
    return NVML_SUCCESS;
  }
  if (s.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

int count_impl(unsigned* n) {
  if (!g_host) return NVML_ERROR_UNINITIALIZED;
  if (!n) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetCount")) return rc;
  *n = t_output == "huge_count" ? 0xFFFFFFF0u : static_cast<unsigned>(g_host->gpus.size());
  return NVML_SUCCESS;
}

int handle_impl(unsigned i, nvmlDevice_t* d) {
  if (!g_host) return NVML_ERROR_UNINITIALIZED;
  if (!d || i >= g_host->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetHandleByIndex", static_cast<int>(i))) return rc;
  *d = reinterpret_cast<nvmlDevice_t>(&g_handles[i]);
  return NVML_SUCCESS;
}

int pci_impl(nvmlDevice_t d, nvmlPciInfo_t* p) {
  const Handle* h = as_handle(d);
  if (!h || !p) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetPciInfo", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  std::memset(p, 0, sizeof *p);
  if (t_output == "unterminated") {
    std::memset(p->busId, 'F', sizeof p->busId);
    return NVML_SUCCESS;
  }
  std::snprintf(p->busId, sizeof p->busId, "%s", g.pci_bus_id.c_str());
  std::snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04X:%02X:%02X.%X", g.pci.domain & 0xffff, g.pci.bus,
                g.pci.device, g.pci.function);
  p->domain = g.pci.domain;
  p->bus = g.pci.bus;
  p->device = g.pci.device;
  p->pciDeviceId = 0x233510de;
  return NVML_SUCCESS;
}

template <class Info>
int processes_impl(const char* fn, nvmlDevice_t d, unsigned* count, Info* infos, bool graphics) {
  const Handle* h = as_handle(d);
  if (!h || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected(fn, h->gpu, h->mig)) return rc;
  if (t_output == "huge_count") {
    *count = 0xFFFFFFF0u;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  const auto& list = graphics ? g_host->gpus[h->gpu].graphics_processes : g_host->gpus[h->gpu].processes;
  if (*count < list.size() || (!infos && !list.empty())) {
    *count = static_cast<unsigned>(list.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = static_cast<unsigned>(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    Info info{};
    info.pid = list[i].pid;
    info.usedGpuMemory = list[i].used_memory_mib ? *list[i].used_memory_mib * 1024 * 1024 : gpumap::kNvmlValueNotAvailable;
    if constexpr (sizeof(Info) == sizeof(nvmlProcessInfo_v2_t)) {
      info.gpuInstanceId = 0xffffffffu;
      info.computeInstanceId = 0xffffffffu;
    }
    infos[i] = info;
  }
  return NVML_SUCCESS;
}

int nvlink_remote_impl(nvmlDevice_t d, unsigned link, nvmlPciInfo_t* p) {
  const Handle* h = as_handle(d);
  if (!h || !p) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetNvLinkRemotePciInfo", h->gpu)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (link >= gpumap::kNvmlMaxNvLinks) return NVML_ERROR_INVALID_ARGUMENT;
  if (link >= g.nvlink_peers.size() + g.nvswitch_links) return NVML_ERROR_NOT_SUPPORTED;
  std::memset(p, 0, sizeof *p);
  // Measured on an H200 NVSwitch system: a switch's "bus id" reads FFFFFFFF:FF:FF.0.
  std::snprintf(p->busId, sizeof p->busId, "%s",
                link < g.nvlink_peers.size() ? g.nvlink_peers[link].c_str() : "FFFFFFFF:FF:FF.0");
  return NVML_SUCCESS;
}

/// A sensor the host file gives (docs/host-file.md), or NOT_SUPPORTED when it does not.
template <class T, class U>
int sensor(const char* fn, nvmlDevice_t d, T* out, std::optional<U> SimGpu::*field) {
  const Handle* h = as_handle(d);
  if (!h || !out) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected(fn, h->gpu, h->mig)) return rc;
  const std::optional<U>& v = g_host->gpus[h->gpu].*field;
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<T>(*v);
  return NVML_SUCCESS;
}

/// How far back a lastSeenTimeStamp may be and still ask for the recent samples only (the driver's
/// buffer holds more; its exact length is not measured: any reader asking for the last second or two
/// is well inside it).
constexpr unsigned long long kRecentUs = 5'000'000;

/// One sample per process the host file gives a utilisation (NVML: one per process that did some
/// work in the last period), stamped now (microseconds since the epoch); NOT_FOUND when none is
/// newer than `last_seen`; NOT_SUPPORTED on a GPU whose file entry says nothing of utilisation.
template <class Put>
int process_samples(const char* fn, nvmlDevice_t d, unsigned* count, bool have_room, unsigned long long last_seen,
                    Put put) {
  const Handle* h = as_handle(d);
  if (!h || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected(fn, h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (!g.process_utilization) return NVML_ERROR_NOT_SUPPORTED;
  auto now = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  std::vector<const gpumap::SimProcess*> with;
  for (const auto* list : {&g.processes, &g.graphics_processes})
    for (const gpumap::SimProcess& p : *list)
      if ((p.sm_utilization || p.memory_utilization) && now > last_seen) with.push_back(&p);
  if (with.empty()) return NVML_ERROR_NOT_FOUND;
  if (!have_room || *count < with.size()) {
    *count = static_cast<unsigned>(with.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = static_cast<unsigned>(with.size());
  // The driver averages each process's samples since lastSeenTimeStamp: asked for everything it
  // holds (0, or more than a few seconds back) it answers the whole buffer's average, which trails
  // a process that just got busy (docs/driver-rules.md, "Per-process utilisation").
  const bool whole_buffer = last_seen + kRecentUs < now;
  for (size_t i = 0; i < with.size(); ++i) {
    const gpumap::SimProcess& p = *with[i];
    unsigned sm = p.sm_utilization.value_or(0), mem = p.memory_utilization.value_or(0);
    if (whole_buffer) {
      sm = p.sm_utilization_buffer.value_or(sm);
      mem = p.memory_utilization_buffer.value_or(mem);
    }
    put(i, p.pid, now, sm, mem);
  }
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

#define EXPORT __attribute__((visibility("default")))

// Not NVML: how gpumap tells the fake its host file without touching the process environment.
EXPORT void gpumapFakeSetHost(const char* path) { g_host_path = path ? path : ""; }

// For gpumap's DynLib: symbols the host file lists in missing_symbols read as absent.
EXPORT int gpumapFakeHidesSymbol(const char* name) {
  const char* env = std::getenv("GPUMAP_FAKE_HOST");
  return gpumap::fake::fake_hides_symbol(!g_host_path.empty() ? g_host_path : env ? env : "", name) ? 1 : 0;
}

EXPORT nvmlReturn_t nvmlInit(void) { return init_impl(); }
EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --g_init_count;
  return NVML_SUCCESS;
}
EXPORT const char* nvmlErrorString(nvmlReturn_t rc) { return gpumap::nvml_error_name(rc); }
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned len) {
  if (!g_host) return NVML_ERROR_UNINITIALIZED;
  if (int rc = injected("nvmlSystemGetDriverVersion")) return rc;
  return copy_string(g_host->driver_version, v, len);
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  if (!g_host) return NVML_ERROR_UNINITIALIZED;
  if (!v) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlSystemGetCudaDriverVersion")) return rc;
  *v = g_host->cuda_driver_version;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned* n) { return count_impl(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t* d) { return handle_impl(i, d); }
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t* p) { return pci_impl(d, p); }
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* out, unsigned len) {
  const Handle* h = as_handle(d);
  if (!h) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetName", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  return copy_string(h->mig < 0 ? g.name : g.mig_devices[h->mig].name, out, len);
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* out, unsigned len) {
  const Handle* h = as_handle(d);
  if (!h) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetUUID", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  return copy_string(h->mig < 0 ? g.uuid : g.mig_devices[h->mig].uuid, out, len);
}
EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned* i) {
  const Handle* h = as_handle(d);
  if (!h || !i) return NVML_ERROR_INVALID_ARGUMENT;
  *i = static_cast<unsigned>(h->gpu);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned* m) {
  const Handle* h = as_handle(d);
  if (!h || !m) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetMinorNumber", h->gpu)) return rc;
  *m = g_host->gpus[h->gpu].minor_number;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  const Handle* h = as_handle(d);
  if (!h || !m) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetMemoryInfo", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  uint64_t total = h->mig < 0 ? g.memory_total_mib : g.mig_devices[h->mig].memory_total_mib;
  uint64_t used = h->mig < 0 ? g.memory_used_mib : 0;
  m->total = total << 20;
  m->used = used << 20;
  m->free = (total - used) << 20;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  const Handle* h = as_handle(d);
  if (!h || !u) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetUtilizationRates", h->gpu)) return rc;
  if (g_host->gpus[h->gpu].mig_enabled) return NVML_ERROR_NOT_SUPPORTED;  // documented for MIG mode
  u->gpu = g_host->gpus[h->gpu].utilization_gpu;
  u->memory = g_host->gpus[h->gpu].utilization_memory;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  const Handle* h = as_handle(d);
  if (!h || !major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetCudaComputeCapability", h->gpu)) return rc;
  *major = g_host->gpus[h->gpu].cc_major;
  *minor = g_host->gpus[h->gpu].cc_minor;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  const Handle* h = as_handle(d);
  if (!h || !current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetMigMode", h->gpu)) return rc;
  *current = *pending = g_host->gpus[h->gpu].mig_enabled ? 1 : 0;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned* n) {
  const Handle* h = as_handle(d);
  if (!h || !n) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetMaxMigDeviceCount", h->gpu)) return rc;
  *n = t_output == "huge_count" ? 4000000000u : g_host->gpus[h->gpu].mig_enabled ? 7 : 0;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned i, nvmlDevice_t* out) {
  const Handle* h = as_handle(d);
  if (!h || !out) return NVML_ERROR_INVALID_ARGUMENT;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (!g.mig_enabled) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetMigDeviceHandleByIndex", h->gpu, static_cast<int>(i))) return rc;
  if (i >= g.mig_devices.size()) return NVML_ERROR_NOT_FOUND;
  *out = mig_handle(h->gpu, static_cast<int>(i));
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned* id) {
  const Handle* h = as_handle(d);
  if (!h || !id || h->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetGpuInstanceId", h->gpu, h->mig)) return rc;
  *id = g_host->gpus[h->gpu].mig_devices[h->mig].gpu_instance_id;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned* id) {
  const Handle* h = as_handle(d);
  if (!h || !id || h->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetComputeInstanceId", h->gpu, h->mig)) return rc;
  *id = g_host->gpus[h->gpu].mig_devices[h->mig].compute_instance_id;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned* c, nvmlProcessInfo_v1_t* i) {
  return processes_impl("nvmlDeviceGetComputeRunningProcesses", d, c, i, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned* c, nvmlProcessInfo_v1_t* i) {
  return processes_impl("nvmlDeviceGetGraphicsRunningProcesses", d, c, i, true);
}
EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned size, unsigned long* set) {
  const Handle* h = as_handle(d);
  if (!h || !set) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetCpuAffinity", h->gpu)) return rc;
  const std::string& list = g_host->gpus[h->gpu].cpu_affinity;
  if (list.empty()) return NVML_ERROR_NOT_SUPPORTED;
  std::memset(set, 0, size * sizeof(unsigned long));
  const char* p = list.c_str();
  while (*p) {
    char* end;
    unsigned long a = std::strtoul(p, &end, 10), b = a;
    if (*end == '-') b = std::strtoul(end + 1, &end, 10);
    for (unsigned long c = a; c <= b && c < size * 64ul; ++c) set[c / 64] |= 1ul << (c % 64);
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  const Handle* h = as_handle(d);
  if (!h || !active) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetNvLinkState", h->gpu)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (link >= gpumap::kNvmlMaxNvLinks) return NVML_ERROR_INVALID_ARGUMENT;
  if (g.nvlink_peers.empty() && g.nvswitch_links == 0) return NVML_ERROR_NOT_SUPPORTED;
  *active = link < g.nvlink_peers.size() + g.nvswitch_links ? 1 : 0;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int caps, int* status) {
  const Handle *ha = as_handle(a), *hb = as_handle(b);
  if (!ha || !hb || !status) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetP2PStatus", ha->gpu)) return rc;
  if (caps != gpumap::kNvmlP2pCapsNvlink) return NVML_ERROR_NOT_SUPPORTED;  // only what gpumap asks
  const SimGpu &ga = g_host->gpus[ha->gpu], &gb = g_host->gpus[hb->gpu];
  bool direct = std::find(ga.nvlink_peers.begin(), ga.nvlink_peers.end(), gb.pci_bus_id) != ga.nvlink_peers.end();
  bool switched = ga.nvswitch_links > 0 && gb.nvswitch_links > 0 && ha->gpu != hb->gpu;
  *status = direct || switched ? gpumap::kNvmlP2pStatusOk : gpumap::kNvmlP2pStatusNotSupported;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d, unsigned l, nvmlPciInfo_t* p) {
  return nvlink_remote_impl(d, l, p);
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor_type, unsigned* temp) {
  if (sensor_type != gpumap::kNvmlTemperatureGpu) return NVML_ERROR_NOT_SUPPORTED;  // only what gpumap asks
  return sensor("nvmlDeviceGetTemperature", d, temp, &SimGpu::temperature_gpu_c);
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  return sensor("nvmlDeviceGetPowerUsage", d, mw, &SimGpu::power_draw_mw);
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned* mw) {
  return sensor("nvmlDeviceGetPowerManagementLimit", d, mw, &SimGpu::power_limit_mw);
}
EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* mw) {
  return sensor("nvmlDeviceGetEnforcedPowerLimit", d, mw, &SimGpu::enforced_power_limit_mw);
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  if (type == gpumap::kNvmlClockSm) return sensor("nvmlDeviceGetClockInfo", d, mhz, &SimGpu::clock_sm_mhz);
  if (type == gpumap::kNvmlClockMem) return sensor("nvmlDeviceGetClockInfo", d, mhz, &SimGpu::clock_memory_mhz);
  return NVML_ERROR_NOT_SUPPORTED;  // graphics, video: not served
}
EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned* percent) {
  return sensor("nvmlDeviceGetFanSpeed", d, percent, &SimGpu::fan_speed_percent);
}
EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int* p) {
  return sensor("nvmlDeviceGetPerformanceState", d, p, &SimGpu::pstate);
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type, unsigned long long* n) {
  bool corrected = error_type == gpumap::kNvmlEccCorrected;
  if (counter_type == gpumap::kNvmlEccAggregate)  // served when the host file gives it
    return sensor("nvmlDeviceGetTotalEccErrors", d, n,
                  corrected ? &SimGpu::ecc_corrected_aggregate : &SimGpu::ecc_uncorrected_aggregate);
  if (counter_type != gpumap::kNvmlEccVolatile) return NVML_ERROR_INVALID_ARGUMENT;
  return sensor("nvmlDeviceGetTotalEccErrors", d, n,
                corrected ? &SimGpu::ecc_corrected_volatile : &SimGpu::ecc_uncorrected_volatile);
}
// The fault counters (docs/host-file.md, "GPU faults"): each NOT_SUPPORTED when the file leaves it out.
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* reasons) {
  return sensor("nvmlDeviceGetCurrentClocksEventReasons", d, reasons, &SimGpu::clock_event_reasons);
}
EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned* value) {
  return sensor("nvmlDeviceGetPcieReplayCounter", d, value, &SimGpu::pcie_replay_count);
}
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corr, unsigned* unc, unsigned* pending,
                                              unsigned* failed) {
  const Handle* h = as_handle(d);
  if (!h || !corr || !unc || !pending || !failed) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetRemappedRows", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (!g.remapped_rows_correctable && !g.remapped_rows_uncorrectable && !g.remapped_rows_pending && !g.remapped_rows_failed)
    return NVML_ERROR_NOT_SUPPORTED;  // a GPU without row remapping (before Ampere)
  *corr = g.remapped_rows_correctable.value_or(0);
  *unc = g.remapped_rows_uncorrectable.value_or(0);
  *pending = g.remapped_rows_pending.value_or(false) ? 1 : 0;
  *failed = g.remapped_rows_failed.value_or(false) ? 1 : 0;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned* count, unsigned long long* addresses) {
  const Handle* h = as_handle(d);
  if (!h || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetRetiredPages", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  const std::optional<uint32_t>& pages = cause == gpumap::kNvmlRetiredDbe ? g.retired_pages_dbe : g.retired_pages_sbe;
  if (!pages) return NVML_ERROR_NOT_SUPPORTED;
  // nvml.h: pageCount 0 asks for the size only; a smaller buffer gets INSUFFICIENT_SIZE and the count.
  if (*count < *pages || (!addresses && *pages)) {
    *count = *pages;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < *pages; ++i) addresses[i] = 0x1000ull * (i + 1);
  *count = *pages;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) {
  const Handle* h = as_handle(d);
  if (!h || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetRetiredPagesPendingStatus", h->gpu, h->mig)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (!g.retired_pages_pending) return NVML_ERROR_NOT_SUPPORTED;
  *pending = *g.retired_pages_pending ? 1 : 0;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t* out, unsigned* count,
                                                    unsigned long long last_seen) {
  return process_samples("nvmlDeviceGetProcessUtilization", d, count, out != nullptr, last_seen,
                         [&](size_t i, unsigned pid, unsigned long long ts, unsigned sm, unsigned mem) {
                           out[i] = nvmlProcessUtilizationSample_t{pid, ts, sm, mem, 0, 0};
                         });
}

#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t d, nvmlProcessesUtilizationInfo_v1_t* info) {
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != gpumap::kNvmlProcessesUtilizationInfoV1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlProcessUtilizationInfo_v1_t* out = info->procUtilArray;
  return process_samples("nvmlDeviceGetProcessesUtilizationInfo", d, &info->processSamplesCount, out != nullptr,
                         info->lastSeenTimeStamp, [&](size_t i, unsigned pid, unsigned long long ts, unsigned sm, unsigned mem) {
                           out[i] = nvmlProcessUtilizationInfo_v1_t{ts, pid, sm, mem, 0, 0, 0, 0};
                         });
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned link, int* type) {
  const Handle* h = as_handle(d);
  if (!h || !type) return NVML_ERROR_INVALID_ARGUMENT;
  if (int rc = injected("nvmlDeviceGetNvLinkRemoteDeviceType", h->gpu)) return rc;
  const SimGpu& g = g_host->gpus[h->gpu];
  if (link >= g.nvlink_peers.size() + g.nvswitch_links) return NVML_ERROR_NOT_SUPPORTED;
  *type = link < g.nvlink_peers.size() ? gpumap::kNvLinkRemoteGpu : gpumap::kNvLinkRemoteSwitch;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksThrottleReasons(d, reasons);
}
EXPORT nvmlReturn_t nvmlInit_v2(void) { return init_impl(); }
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) { return nvmlSystemGetCudaDriverVersion(v); }
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) { return count_impl(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) { return handle_impl(i, d); }
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t* p) { return pci_impl(d, p); }
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) { return pci_impl(d, p); }
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  if (m->version != gpumap::kNvmlMemoryV2Version) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlMemory_t v1;
  int rc = nvmlDeviceGetMemoryInfo(d, &v1);
  if (rc) return rc;
  m->total = v1.total;
  m->reserved = 0;
  m->free = v1.free;
  m->used = v1.used;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned* c, nvmlProcessInfo_v2_t* i) {
  return processes_impl("nvmlDeviceGetComputeRunningProcesses", d, c, i, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* c, nvmlProcessInfo_v2_t* i) {
  return processes_impl("nvmlDeviceGetComputeRunningProcesses", d, c, i, false);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned* c, nvmlProcessInfo_v2_t* i) {
  return processes_impl("nvmlDeviceGetGraphicsRunningProcesses", d, c, i, true);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned* c, nvmlProcessInfo_v2_t* i) {
  return processes_impl("nvmlDeviceGetGraphicsRunningProcesses", d, c, i, true);
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned l, nvmlPciInfo_t* p) {
  return nvlink_remote_impl(d, l, p);
}
#endif

}  // extern "C"
