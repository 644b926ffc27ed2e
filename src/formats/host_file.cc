#include "formats/host_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/gpu_fault.h"
#include "model/json_bounds.h"
#include "model/text.h"

namespace gpumap {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxMib = 1ull << 30;  // 1 PiB: more than any GPU; keeps MiB << 20 within 64 bits
constexpr uint32_t kMaxPid = 1u << 22;    // PID_MAX_LIMIT on 64-bit Linux

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

template <class T>
T get_or(const json& j, const char* key, T def, const std::string& path, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return def;
  try {
    return j[key].get<T>();
  } catch (const json::exception&) {
    fail(path, where + "." + key + " has the wrong type");
  }
}

void check_keys(const json& obj, const std::vector<std::string>& known, const std::string& path, const std::string& where);

/// The `container` object: a container on this host that gpumap runs in (docs/host-file.md).
ContainerFacts read_container(const json& c, const SimHost& h, const std::string& path) {
  const std::string where = "container";
  if (!c.is_object()) fail(path, "container must be an object");
  check_keys(c, {"privileged", "dev_nodes", "device_cgroup", "given", "given_by"}, path, where);
  ContainerFacts f;
  f.privileged = get_or<bool>(c, "privileged", false, path, where);
  if (c.contains("given")) {
    if (!c["given"].is_array()) fail(path, "container.given must be an array of GPU or MIG UUIDs or nvidia-smi indices");
    f.given = std::vector<std::string>{};
    for (const json& e : c["given"]) {
      std::string v = e.is_number_unsigned() ? std::to_string(e.get<uint64_t>()) : e.is_string() ? e.get<std::string>() : "";
      bool known = false;
      for (size_t i = 0; i < h.gpus.size(); ++i) {
        known |= v == std::to_string(i) || v == h.gpus[i].uuid;
        for (const SimMig& m : h.gpus[i].mig_devices) known |= v == m.uuid;
      }
      if (!known) fail(path, "container.given: `" + v + "` is no GPU of this host (a UUID as in gpus[].uuid or mig_devices[].uuid, or an nvidia-smi index)");
      f.given->push_back(v);
    }
  }
  f.given_by = get_or<std::string>(c, "given_by", f.given ? "the container's allocation" : "", path, where);
  // The minors of the GPUs it was given (all when that is not said).
  std::vector<uint32_t> given_minors, all_minors;
  for (size_t i = 0; i < h.gpus.size(); ++i) {
    all_minors.push_back(h.gpus[i].minor_number);
    bool given = !f.given;
    for (const std::string& v : f.given.value_or(std::vector<std::string>{})) {
      given |= v == std::to_string(i) || v == h.gpus[i].uuid;
      for (const SimMig& m : h.gpus[i].mig_devices) given |= v == m.uuid;
    }
    if (given) given_minors.push_back(h.gpus[i].minor_number);
  }
  std::sort(all_minors.begin(), all_minors.end());
  std::sort(given_minors.begin(), given_minors.end());
  if (c.contains("dev_nodes")) {
    auto nodes = get_or<std::vector<uint32_t>>(c, "dev_nodes", {}, path, where);
    std::sort(nodes.begin(), nodes.end());
    f.dev_nodes = nodes;
  } else {
    f.dev_nodes = *f.privileged ? all_minors : given_minors;  // a privileged container gets every node
  }
  if (c.contains("device_cgroup")) {
    const json& d = c["device_cgroup"];
    if (d.is_string() && d.get<std::string>() == "v2") f.cgroup = DeviceCgroup::kV2;
    else if (d.is_array()) {
      f.cgroup = DeviceCgroup::kV1;
      f.device_rules = get_or<std::vector<std::string>>(c, "device_cgroup", {}, path, where);
    } else
      fail(path, "container.device_cgroup must be \"v2\" or a list of cgroup v1 devices.list rules (\"c 195:0 rw\")");
  } else if (*f.privileged) {
    f.cgroup = DeviceCgroup::kV1;
    f.device_rules = {"a *:* rwm"};
  }
  return f;
}

/// Every key of `obj` must be one of `known` (or start with "_": a comment): a typo such as
/// `memroy_used_mib` is an error naming it, not a field silently left at its default.
void check_keys(const json& obj, const std::vector<std::string>& known, const std::string& path, const std::string& where) {
  for (auto& [k, v] : obj.items())
    if (k.rfind('_', 0) != 0 && std::find(known.begin(), known.end(), k) == known.end())
      fail(path, (where.empty() ? std::string("the host") : where) + " has an unknown key `" + k + "`" + did_you_mean(k, known) +
                     " (docs/host-file.md lists the keys)");
}

/// A whole number in [lo, hi]: a fraction, a negative number where none is allowed, or one
/// beyond the range (JSON numbers past 2^64 parse as floating point) is an error naming it.
template <class T>
T get_num(const json& j, const char* key, T def, const std::string& path, const std::string& where,
          T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) {
  if (!j.contains(key) || j[key].is_null()) return def;
  const json& v = j[key];
  std::string name = where + "." + key;
  auto range = [&] { return " (" + std::to_string(lo) + " to " + std::to_string(hi) + ")"; };
  if (!v.is_number()) fail(path, name + " must be a number");
  if (!v.is_number_integer()) fail(path, name + " must be a whole number" + range());
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) fail(path, name + " is out of range" + range());
    return static_cast<T>(u);
  }
  int64_t i = v.get<int64_t>();
  if (i < 0 && (std::is_unsigned_v<T> || i < static_cast<int64_t>(lo))) fail(path, name + " is out of range" + range());
  if (i >= 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(hi)) fail(path, name + " is out of range" + range());
  return static_cast<T>(i);
}

/// A power in watts (a whole or fractional number, 0 to 100 000) as NVML's milliwatts; nullopt when absent.
std::optional<uint32_t> watts(const json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const json& v = j[key];
  if (!v.is_number()) fail(path, where + "." + key + " must be a number of watts");
  double w = v.get<double>();
  if (!(w >= 0 && w <= 100000)) fail(path, where + "." + key + " is out of range (0 to 100000 W)");
  return static_cast<uint32_t>(w * 1000 + 0.5);
}

/// NVML's UUID form: PREFIX then 8-4-4-4-12 hex digits ("GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab").
bool is_uuid(const std::string& s, const char* prefix) {
  static const size_t groups[] = {8, 4, 4, 4, 12};
  size_t plen = std::strlen(prefix);
  if (s.compare(0, plen, prefix) != 0) return false;
  size_t pos = plen;
  for (size_t g = 0; g < 5; ++g) {
    if (g > 0 && (pos >= s.size() || s[pos++] != '-')) return false;
    for (size_t k = 0; k < groups[g]; ++k, ++pos)
      if (pos >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[pos]))) return false;
  }
  return pos == s.size();
}

/// The file's text: a regular file only (not a FIFO, a device like /dev/zero, a folder), at
/// most kMaxHostFileBytes.
std::string read_host_text(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(path, std::string("cannot be read: ") + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    fail(path, S_ISDIR(st.st_mode) ? "is a directory, not a host file" : "is not a regular file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxHostFileBytes) {
      close(fd);
      fail(path, "is larger than " + std::to_string(kMaxHostFileBytes >> 20) + " MiB");
    }
  }
  close(fd);
  return text;
}

std::map<std::string, int> read_errors(const json& j, const std::string& path, const std::string& where) {
  std::map<std::string, int> out;
  if (!j.contains("errors")) return out;
  if (!j["errors"].is_object()) fail(path, where + ".errors must be an object {\"nvmlFunction\": \"NVML_ERROR_...\"}");
  for (auto& [k, v] : j["errors"].items()) {
    int code = v.is_number_unsigned() && v.get<uint64_t>() <= 999999 ? v.get<int>()
               : v.is_string()                                       ? error_code_from_name(v.get<std::string>())
                                                                     : -1;
    if (code < 0) fail(path, where + ".errors." + k + " is not an NVML/CUDA error name or code");
    out[k] = code;
  }
  return out;
}

/// The calls the fake NVML and CUDA libraries count against `faults` (src/fake: the names they pass
/// to the fault plan, versions stripped).  A name outside it would match nothing, silently.
constexpr const char* kFaultCalls[] = {
    "nvmlInit", "nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion", "nvmlDeviceGetCount",
    "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetUUID", "nvmlDeviceGetName", "nvmlDeviceGetPciInfo",
    "nvmlDeviceGetMinorNumber", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount",
    "nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId",
    "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetCpuAffinity",
    "nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetNvLinkRemoteDeviceType",
    "nvmlDeviceGetP2PStatus", "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetFanSpeed", "nvmlDeviceGetPerformanceState", "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetProcessesUtilizationInfo", "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetPcieReplayCounter", "nvmlDeviceGetRemappedRows", "nvmlDeviceGetRetiredPages",
    "nvmlDeviceGetRetiredPagesPendingStatus", "cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetUuid",
    "cuDeviceGetPCIBusId"};

bool known_fault_call(const std::string& call) {
  for (const char* c : kFaultCalls)
    if (call == c) return true;
  return false;
}

/// `clock_event_reasons`: NVML's bit mask as a number, or a list of the bits' names ("hw_slowdown").
uint64_t clock_reasons(const json& v, const std::string& path, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (!v.is_array())
    fail(path, where + " must be a list of reasons (\"hw_slowdown\", \"hw_thermal_slowdown\", ...) or NVML's bit mask");
  uint64_t bits = 0;
  for (const json& name : v) {
    std::optional<uint64_t> bit = name.is_string() ? clock_event_bit(name.get<std::string>()) : std::nullopt;
    if (!bit)
      fail(path, where + ": `" + (name.is_string() ? name.get<std::string>() : name.dump()) +
                     "` is not a clock-event reason (gpu_idle, applications_clocks_setting, sw_power_cap, hw_slowdown, "
                     "sync_boost, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown, display_clock_setting)");
    bits |= *bit;
  }
  return bits;
}

std::vector<SimFault> read_faults(const json& j, const std::string& path) {
  std::vector<SimFault> out;
  if (!j.contains("faults")) return out;
  if (!j["faults"].is_array()) fail(path, "faults must be an array of {\"call\": ..., ...}");
  size_t i = 0;
  for (const json& f : j["faults"]) {
    std::string where = "faults[" + std::to_string(i++) + "]";
    if (!f.is_object()) fail(path, where + " must be an object");
    check_keys(f, {"call", "gpu", "mig", "error", "after", "times", "delay_ms", "hang", "output"}, path, where);
    SimFault x;
    x.call = get_or<std::string>(f, "call", "", path, where);
    if (x.call.empty()) fail(path, where + " needs \"call\" (a function name, or \"*\")");
    if (x.call != "*" && !known_fault_call(x.call)) {
      std::string all;
      for (const char* c : kFaultCalls) all += std::string(all.empty() ? "" : ", ") + c;
      fail(path, where + ".call `" + x.call + "` is not a call the fakes inject faults into (one of: " + all +
                     ", or \"*\"; without the _vN suffix)");
    }
    x.gpu = get_num<int>(f, "gpu", -1, path, where, -1, 1 << 20);
    x.mig = get_num<int>(f, "mig", -1, path, where, -1, 6);
    if (f.contains("error")) {
      const json& e = f["error"];
      x.error = e.is_number_unsigned() && e.get<uint64_t>() <= 999999 ? e.get<int>()
                : e.is_string()                                       ? error_code_from_name(e.get<std::string>())
                                                                      : -1;
      if (x.error <= 0) fail(path, where + ".error is not an NVML/CUDA error name or code");
    }
    x.after = get_num<uint64_t>(f, "after", 0, path, where);
    x.times = get_num<uint64_t>(f, "times", 0, path, where);
    x.delay_ms = get_num<uint32_t>(f, "delay_ms", 0, path, where, 0, 3600000);
    x.hang = get_or<bool>(f, "hang", false, path, where);
    x.output = get_or<std::string>(f, "output", "", path, where);
    if (!x.output.empty() && x.output != "unterminated" && x.output != "huge_count" && x.output != "stdout")
      fail(path, where + ".output must be \"unterminated\", \"huge_count\" or \"stdout\"");
    if (!x.error && !x.hang && !x.delay_ms && x.output.empty())
      fail(path, where + " does nothing: give error, delay_ms, hang or output");
    out.push_back(x);
  }
  return out;
}

}  // namespace

int error_code_from_name(const std::string& name) {
  static const std::map<std::string, int> names = {
      {"NVML_ERROR_UNINITIALIZED", 1}, {"NVML_ERROR_INVALID_ARGUMENT", 2}, {"NVML_ERROR_NOT_SUPPORTED", 3},
      {"NVML_ERROR_NO_PERMISSION", 4}, {"NVML_ERROR_NOT_FOUND", 6}, {"NVML_ERROR_INSUFFICIENT_SIZE", 7},
      {"NVML_ERROR_DRIVER_NOT_LOADED", 9}, {"NVML_ERROR_TIMEOUT", 10}, {"NVML_ERROR_GPU_IS_LOST", 15},
      {"NVML_ERROR_LIB_RM_VERSION_MISMATCH", 18}, {"NVML_ERROR_NO_DATA", 21}, {"NVML_ERROR_UNKNOWN", 999},
      {"CUDA_ERROR_NOT_INITIALIZED", 3}, {"CUDA_ERROR_NO_DEVICE", 100}, {"CUDA_ERROR_INVALID_DEVICE", 101},
      {"CUDA_ERROR_OPERATING_SYSTEM", 304}, {"CUDA_ERROR_UNKNOWN", 999}};
  auto it = names.find(name);
  if (it != names.end()) return it->second;
  // A plain number of at most 6 digits (NVML and CUDA codes are below 1000); a longer one
  // would overflow std::stoi (found by fuzz_host_file).
  if (!name.empty() && name.size() <= 6 && std::all_of(name.begin(), name.end(), ::isdigit)) return std::stoi(name);
  return -1;
}

namespace {
SimHost parse_checked(std::string_view text, const std::string& path);
}

SimHost parse_host_file(std::string_view text, const std::string& path) {
  try {
    return parse_checked(text, path);
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {  // anything a malformed file can provoke names the file
    fail(path, std::string("is not a valid host file: ") + e.what());
  }
}

SimHost load_host_file(const std::string& path) { return parse_host_file(read_host_text(path), path); }

namespace {
SimHost parse_checked(std::string_view text, const std::string& path) {
  if (auto e = json_bounds_error(text)) fail(path, "is not a gpumap host file (" + *e + ")");
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    fail(path, std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(path, "must hold a JSON object");
  check_keys(j, {"driver_version", "cuda_driver_version", "boot_id", "hostname", "dev_dir", "errors", "faults",
                 "missing_symbols", "gpus", "cuda_default_order", "container", "kubelet", "kernel_log", "uptime_s"},
             path, "");
  SimHost h;
  h.path = path;
  h.driver_version = get_or<std::string>(j, "driver_version", h.driver_version, path, "");
  h.cuda_driver_version = get_num<int>(j, "cuda_driver_version", h.cuda_driver_version, path, "", 1000, 999999);
  h.boot_id = get_or<std::string>(j, "boot_id", "", path, "");
  h.hostname = get_or<std::string>(j, "hostname", "", path, "");
  h.dev_dir = get_or<std::string>(j, "dev_dir", "", path, "");
  h.errors = read_errors(j, path, "");
  h.faults = read_faults(j, path);
  if (j.contains("missing_symbols")) {
    auto names = get_or<std::vector<std::string>>(j, "missing_symbols", {}, path, "");
    h.missing_symbols.insert(names.begin(), names.end());
  }
  if (!j.contains("gpus") || !j["gpus"].is_array()) fail(path, "needs \"gpus\": [ ... ]");
  std::set<std::string> uuids, pcis;
  size_t i = 0;
  for (const json& g : j["gpus"]) {
    std::string where = "gpus[" + std::to_string(i++) + "]";
    if (!g.is_object()) fail(path, where + " must be an object");
    check_keys(g, {"name", "uuid", "pci_bus_id", "compute_capability", "multiprocessor_count", "memory_total_mib",
                   "memory_used_mib", "utilization_gpu", "utilization_memory", "minor_number", "mig_enabled",
                   "cpu_affinity", "cuda_visible", "errors", "processes", "graphics_processes", "nvlink_peers",
                   "nvswitch_links", "mig_devices", "temperature_gpu_c", "power_draw_w", "power_limit_w",
                   "enforced_power_limit_w", "clock_sm_mhz", "clock_memory_mhz", "fan_speed_percent", "pstate",
                   "ecc_corrected_volatile", "ecc_uncorrected_volatile", "process_utilization", "ecc_corrected_aggregate",
                   "ecc_uncorrected_aggregate", "retired_pages_sbe", "retired_pages_dbe", "retired_pages_pending",
                   "remapped_rows_correctable", "remapped_rows_uncorrectable", "remapped_rows_pending",
                   "remapped_rows_failed", "clock_event_reasons", "pcie_replay_count"},
               path, where);
    SimGpu f;
    f.name = get_or<std::string>(g, "name", "", path, where);
    f.uuid = get_or<std::string>(g, "uuid", "", path, where);
    std::string pci = get_or<std::string>(g, "pci_bus_id", "", path, where);
    if (f.name.empty()) fail(path, where + " needs \"name\"");
    if (!is_uuid(f.uuid, "GPU-"))
      fail(path, where + ".uuid `" + f.uuid + "` is not \"GPU-\" and 32 hex digits (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
    if (!g.contains("pci_bus_id")) fail(path, where + " needs \"pci_bus_id\" (like \"00000000:3B:00.0\")");
    auto addr = parse_pci_address(pci);
    if (!addr) fail(path, where + ".pci_bus_id `" + pci + "` is not a PCI address like 00000000:3B:00.0");
    f.pci = *addr;
    f.pci_bus_id = format_pci_nvml(*addr);
    if (!uuids.insert(f.uuid).second) fail(path, where + ".uuid repeats another GPU's");
    if (!pcis.insert(f.pci_bus_id).second) fail(path, where + ".pci_bus_id repeats another GPU's");
    std::string cc = get_or<std::string>(g, "compute_capability", "9.0", path, where);
    if (std::sscanf(cc.c_str(), "%d.%d", &f.cc_major, &f.cc_minor) != 2)
      fail(path, where + ".compute_capability must look like \"9.0\"");
    f.multiprocessor_count = get_num<uint32_t>(g, "multiprocessor_count", 0, path, where, 0, 65536);
    f.memory_total_mib = get_num<uint64_t>(g, "memory_total_mib", 0, path, where, 0, kMaxMib);
    f.memory_used_mib = get_num<uint64_t>(g, "memory_used_mib", 0, path, where, 0, kMaxMib);
    if (f.memory_used_mib > f.memory_total_mib) fail(path, where + ".memory_used_mib exceeds memory_total_mib");
    f.utilization_gpu = get_num<uint32_t>(g, "utilization_gpu", 0, path, where, 0, 100);
    f.utilization_memory = get_num<uint32_t>(g, "utilization_memory", 0, path, where, 0, 100);
    f.minor_number = get_num<uint32_t>(g, "minor_number", static_cast<uint32_t>(i - 1), path, where, 0, 1u << 20);
    f.mig_enabled = get_or<bool>(g, "mig_enabled", false, path, where);
    f.cpu_affinity = get_or<std::string>(g, "cpu_affinity", "", path, where);
    f.cuda_visible = get_or<bool>(g, "cuda_visible", true, path, where);
    f.errors = read_errors(g, path, where);
    auto opt_num = [&](const char* key, auto hi) -> std::optional<decltype(hi)> {
      using T = decltype(hi);
      if (!g.contains(key) || g[key].is_null()) return std::nullopt;
      return get_num<T>(g, key, T{}, path, where, T{}, hi);
    };
    f.temperature_gpu_c = opt_num("temperature_gpu_c", uint32_t{200});
    f.power_draw_mw = watts(g, "power_draw_w", path, where);
    f.power_limit_mw = watts(g, "power_limit_w", path, where);
    f.enforced_power_limit_mw = watts(g, "enforced_power_limit_w", path, where);
    if (!f.enforced_power_limit_mw) f.enforced_power_limit_mw = f.power_limit_mw;  // the usual case
    f.clock_sm_mhz = opt_num("clock_sm_mhz", uint32_t{100000});
    f.clock_memory_mhz = opt_num("clock_memory_mhz", uint32_t{100000});
    f.fan_speed_percent = opt_num("fan_speed_percent", uint32_t{100});
    f.pstate = opt_num("pstate", uint32_t{15});
    f.ecc_corrected_volatile = opt_num("ecc_corrected_volatile", uint64_t{1} << 53);
    f.ecc_uncorrected_volatile = opt_num("ecc_uncorrected_volatile", uint64_t{1} << 53);
    f.process_utilization = get_or<bool>(g, "process_utilization", false, path, where);
    f.ecc_corrected_aggregate = opt_num("ecc_corrected_aggregate", uint64_t{1} << 53);
    f.ecc_uncorrected_aggregate = opt_num("ecc_uncorrected_aggregate", uint64_t{1} << 53);
    f.retired_pages_sbe = opt_num("retired_pages_sbe", uint32_t{65536});
    f.retired_pages_dbe = opt_num("retired_pages_dbe", uint32_t{65536});
    f.remapped_rows_correctable = opt_num("remapped_rows_correctable", uint32_t{65536});
    f.remapped_rows_uncorrectable = opt_num("remapped_rows_uncorrectable", uint32_t{65536});
    f.pcie_replay_count = opt_num("pcie_replay_count", uint32_t{0xFFFFFFFFu});
    auto opt_bool = [&](const char* key) -> std::optional<bool> {
      if (!g.contains(key) || g[key].is_null()) return std::nullopt;
      return get_or<bool>(g, key, false, path, where);
    };
    f.retired_pages_pending = opt_bool("retired_pages_pending");
    f.remapped_rows_pending = opt_bool("remapped_rows_pending");
    f.remapped_rows_failed = opt_bool("remapped_rows_failed");
    if (g.contains("clock_event_reasons") && !g["clock_event_reasons"].is_null())
      f.clock_event_reasons = clock_reasons(g["clock_event_reasons"], path, where + ".clock_event_reasons");
    for (const char* key : {"processes", "graphics_processes"}) {
      if (!g.contains(key)) continue;
      if (!g[key].is_array()) fail(path, where + "." + key + " must be an array");
      for (const json& p : g[key]) {
        if (p.is_object())
          check_keys(p, {"pid", "used_memory_mib", "sm_utilization", "memory_utilization", "sm_utilization_buffer",
                         "memory_utilization_buffer"},
                     path, where + "." + key);
        SimProcess fp;
        fp.pid = get_num<uint32_t>(p, "pid", 0, path, where + "." + key, 0, kMaxPid);
        if (fp.pid == 0) fail(path, where + "." + key + " entries need a non-zero \"pid\"");
        if (p.contains("used_memory_mib") && !p["used_memory_mib"].is_null())
          fp.used_memory_mib = get_num<uint64_t>(p, "used_memory_mib", 0, path, where + "." + key, 0, kMaxMib);
        for (auto [k, out] : {std::pair{"sm_utilization", &fp.sm_utilization}, std::pair{"memory_utilization", &fp.memory_utilization},
                              std::pair{"sm_utilization_buffer", &fp.sm_utilization_buffer},
                              std::pair{"memory_utilization_buffer", &fp.memory_utilization_buffer}})
          if (p.contains(k) && !p[k].is_null()) {
            *out = get_num<uint32_t>(p, k, 0, path, where + "." + key, 0, 100);
            f.process_utilization = true;
          }
        (std::string(key) == "processes" ? f.processes : f.graphics_processes).push_back(fp);
      }
    }
    if (g.contains("nvlink_peers")) {
      if (!g["nvlink_peers"].is_array()) fail(path, where + ".nvlink_peers must be an array");
      for (const json& p : g["nvlink_peers"]) {
        auto a = p.is_string() ? parse_pci_address(p.get<std::string>()) : std::nullopt;
        if (!a) fail(path, where + ".nvlink_peers entries must be PCI bus ids");
        f.nvlink_peers.push_back(format_pci_nvml(*a));
      }
    }
    f.nvswitch_links = get_num<uint32_t>(g, "nvswitch_links", 0, path, where, 0, 18);
    if (f.nvlink_peers.size() + f.nvswitch_links > 18) fail(path, where + " has more than 18 NVLinks");
    if (g.contains("mig_devices")) {
      size_t m = 0;
      if (!g["mig_devices"].is_array()) fail(path, where + ".mig_devices must be an array");
      if (g["mig_devices"].size() > 7) fail(path, where + " has more than 7 mig_devices (the most a GPU has)");
      for (const json& md : g["mig_devices"]) {
        std::string mw = where + ".mig_devices[" + std::to_string(m++) + "]";
        if (md.is_object())
          check_keys(md, {"uuid", "name", "gpu_instance_id", "compute_instance_id", "memory_total_mib", "multiprocessor_count"},
                     path, mw);
        SimMig fm;
        fm.uuid = get_or<std::string>(md, "uuid", "", path, mw);
        if (!is_uuid(fm.uuid, "MIG-"))
          fail(path, mw + ".uuid `" + fm.uuid + "` is not \"MIG-\" and 32 hex digits (MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
        if (!uuids.insert(fm.uuid).second) fail(path, mw + ".uuid repeats another device's");
        fm.name = get_or<std::string>(md, "name", f.name + " MIG", path, mw);
        fm.gpu_instance_id = get_num<uint32_t>(md, "gpu_instance_id", 0, path, mw, 0, 65535);
        fm.compute_instance_id = get_num<uint32_t>(md, "compute_instance_id", 0, path, mw, 0, 65535);
        fm.memory_total_mib = get_num<uint64_t>(md, "memory_total_mib", 0, path, mw, 0, kMaxMib);
        fm.multiprocessor_count = get_num<uint32_t>(md, "multiprocessor_count", 0, path, mw, 0, 65536);
        f.mig_devices.push_back(fm);
      }
      if (!f.mig_devices.empty() && !f.mig_enabled) fail(path, where + " has mig_devices but mig_enabled is false");
    }
    h.gpus.push_back(std::move(f));
  }
  std::sort(h.gpus.begin(), h.gpus.end(), [](const SimGpu& a, const SimGpu& b) { return a.pci < b.pci; });
  std::set<std::string> pci_set;
  for (const SimGpu& g : h.gpus) pci_set.insert(g.pci_bus_id);
  for (const SimGpu& g : h.gpus)
    for (const std::string& p : g.nvlink_peers)
      if (!pci_set.count(p) || p == g.pci_bus_id)
        fail(path, g.uuid + ".nvlink_peers: " + p + " is not another GPU of this host");
  for (size_t k = 0; k < h.faults.size(); ++k)
    if (h.faults[k].gpu >= static_cast<int>(h.gpus.size()))
      fail(path, "faults[" + std::to_string(k) + "].gpu is " + std::to_string(h.faults[k].gpu) + " but the host has " +
                     std::to_string(h.gpus.size()) + " GPUs (NVML indices from 0)");
  if (j.contains("cuda_default_order")) {
    h.cuda_default_order = get_or<std::vector<std::string>>(j, "cuda_default_order", {}, path, "");
    std::set<std::string> want, got(h.cuda_default_order.begin(), h.cuda_default_order.end());
    for (const SimGpu& g : h.gpus)
      if (g.cuda_visible && !g.mig_enabled) want.insert(g.uuid);
    if (want != got || got.size() != h.cuda_default_order.size())
      fail(path, "cuda_default_order must list each GPU's UUID once (GPUs with MIG enabled or "
                 "cuda_visible false excluded)");
  }
  if (j.contains("kernel_log")) {
    if (!j["kernel_log"].is_array()) fail(path, "kernel_log must be a list of kernel-log lines (strings)");
    for (const json& line : j["kernel_log"]) {
      if (!line.is_string()) fail(path, "kernel_log entries must be strings (one kernel-log line each)");
      h.kernel_log.push_back(line.get<std::string>());
    }
  }
  if (j.contains("uptime_s") && !j["uptime_s"].is_null()) {
    if (!j["uptime_s"].is_number() || j["uptime_s"].get<double>() < 0 || j["uptime_s"].get<double>() > 1e9)
      fail(path, "uptime_s must be a number of seconds from 0 to 1e9");
    h.uptime_s = j["uptime_s"].get<double>();
  }
  if (j.contains("container")) h.container = read_container(j["container"], h, path);
  if (j.contains("kubelet")) {
    if (!j["kubelet"].is_object()) fail(path, "kubelet must be an object (gpumap-kubelet's JSON, docs/host-file.md)");
    h.kubelet = j["kubelet"].dump();  // its content is checked by the session (the fakes never read it)
  }
  return h;
}
}  // namespace

}  // namespace gpumap
