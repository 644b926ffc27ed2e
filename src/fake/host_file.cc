#include "fake/host_file.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpumap::fake {
namespace {

using nlohmann::json;

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

std::map<std::string, int> read_errors(const json& j, const std::string& path, const std::string& where) {
  std::map<std::string, int> out;
  if (!j.contains("errors")) return out;
  if (!j["errors"].is_object()) fail(path, where + ".errors must be an object {\"nvmlFunction\": \"NVML_ERROR_...\"}");
  for (auto& [k, v] : j["errors"].items()) {
    int code = v.is_number_integer() ? v.get<int>() : error_code_from_name(v.is_string() ? v.get<std::string>() : "");
    if (code < 0) fail(path, where + ".errors." + k + " is not an NVML/CUDA error name or code");
    out[k] = code;
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
FakeHost load_checked(const std::string& path);
}

FakeHost load_host_file(const std::string& path) {
  try {
    return load_checked(path);
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {  // anything a malformed file can provoke names the file
    fail(path, std::string("is not a valid host file: ") + e.what());
  }
}

namespace {
FakeHost load_checked(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    fail(path, std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(path, "must hold a JSON object");
  FakeHost h;
  h.path = path;
  h.driver_version = get_or<std::string>(j, "driver_version", h.driver_version, path, "");
  h.cuda_driver_version = get_or<int>(j, "cuda_driver_version", h.cuda_driver_version, path, "");
  h.boot_id = get_or<std::string>(j, "boot_id", "", path, "");
  h.hostname = get_or<std::string>(j, "hostname", "", path, "");
  h.errors = read_errors(j, path, "");
  if (!j.contains("gpus") || !j["gpus"].is_array()) fail(path, "needs \"gpus\": [ ... ]");
  std::set<std::string> uuids, pcis;
  size_t i = 0;
  for (const json& g : j["gpus"]) {
    std::string where = "gpus[" + std::to_string(i++) + "]";
    if (!g.is_object()) fail(path, where + " must be an object");
    FakeGpu f;
    f.name = get_or<std::string>(g, "name", "", path, where);
    f.uuid = get_or<std::string>(g, "uuid", "", path, where);
    std::string pci = get_or<std::string>(g, "pci_bus_id", "", path, where);
    if (f.name.empty()) fail(path, where + " needs \"name\"");
    if (f.uuid.rfind("GPU-", 0) != 0) fail(path, where + ".uuid must start with \"GPU-\"");
    auto addr = parse_pci_address(pci);
    if (!addr) fail(path, where + ".pci_bus_id `" + pci + "` is not a PCI address like 00000000:3B:00.0");
    f.pci = *addr;
    f.pci_bus_id = format_pci_nvml(*addr);
    if (!uuids.insert(f.uuid).second) fail(path, where + ".uuid repeats another GPU's");
    if (!pcis.insert(f.pci_bus_id).second) fail(path, where + ".pci_bus_id repeats another GPU's");
    std::string cc = get_or<std::string>(g, "compute_capability", "9.0", path, where);
    if (std::sscanf(cc.c_str(), "%d.%d", &f.cc_major, &f.cc_minor) != 2)
      fail(path, where + ".compute_capability must look like \"9.0\"");
    f.multiprocessor_count = get_or<uint32_t>(g, "multiprocessor_count", 0, path, where);
    f.memory_total_mib = get_or<uint64_t>(g, "memory_total_mib", 0, path, where);
    f.memory_used_mib = get_or<uint64_t>(g, "memory_used_mib", 0, path, where);
    if (f.memory_used_mib > f.memory_total_mib) fail(path, where + ".memory_used_mib exceeds memory_total_mib");
    f.utilization_gpu = get_or<uint32_t>(g, "utilization_gpu", 0, path, where);
    f.utilization_memory = get_or<uint32_t>(g, "utilization_memory", 0, path, where);
    f.minor_number = get_or<uint32_t>(g, "minor_number", static_cast<uint32_t>(i - 1), path, where);
    f.mig_enabled = get_or<bool>(g, "mig_enabled", false, path, where);
    f.cpu_affinity = get_or<std::string>(g, "cpu_affinity", "", path, where);
    f.cuda_visible = get_or<bool>(g, "cuda_visible", true, path, where);
    f.errors = read_errors(g, path, where);
    for (const char* key : {"processes", "graphics_processes"}) {
      if (!g.contains(key)) continue;
      if (!g[key].is_array()) fail(path, where + "." + key + " must be an array");
      for (const json& p : g[key]) {
        FakeProcess fp;
        fp.pid = get_or<uint32_t>(p, "pid", 0, path, where + "." + key);
        if (fp.pid == 0) fail(path, where + "." + key + " entries need a non-zero \"pid\"");
        if (p.contains("used_memory_mib") && !p["used_memory_mib"].is_null())
          fp.used_memory_mib = get_or<uint64_t>(p, "used_memory_mib", 0, path, where + "." + key);
        (std::string(key) == "processes" ? f.processes : f.graphics_processes).push_back(fp);
      }
    }
    if (g.contains("nvlink_peers")) {
      for (const json& p : g["nvlink_peers"]) {
        auto a = p.is_string() ? parse_pci_address(p.get<std::string>()) : std::nullopt;
        if (!a) fail(path, where + ".nvlink_peers entries must be PCI bus ids");
        f.nvlink_peers.push_back(format_pci_nvml(*a));
      }
    }
    f.nvswitch_links = get_or<uint32_t>(g, "nvswitch_links", 0, path, where);
    if (f.nvlink_peers.size() + f.nvswitch_links > 18) fail(path, where + " has more than 18 NVLinks");
    if (g.contains("mig_devices")) {
      size_t m = 0;
      for (const json& md : g["mig_devices"]) {
        std::string mw = where + ".mig_devices[" + std::to_string(m++) + "]";
        FakeMig fm;
        fm.uuid = get_or<std::string>(md, "uuid", "", path, mw);
        if (fm.uuid.rfind("MIG-", 0) != 0) fail(path, mw + ".uuid must start with \"MIG-\"");
        if (!uuids.insert(fm.uuid).second) fail(path, mw + ".uuid repeats another device's");
        fm.gpu_instance_id = get_or<uint32_t>(md, "gpu_instance_id", 0, path, mw);
        fm.compute_instance_id = get_or<uint32_t>(md, "compute_instance_id", 0, path, mw);
        fm.memory_total_mib = get_or<uint64_t>(md, "memory_total_mib", 0, path, mw);
        fm.multiprocessor_count = get_or<uint32_t>(md, "multiprocessor_count", 0, path, mw);
        f.mig_devices.push_back(fm);
      }
      if (!f.mig_devices.empty() && !f.mig_enabled) fail(path, where + " has mig_devices but mig_enabled is false");
    }
    h.gpus.push_back(std::move(f));
  }
  std::sort(h.gpus.begin(), h.gpus.end(), [](const FakeGpu& a, const FakeGpu& b) { return a.pci < b.pci; });
  std::set<std::string> pci_set;
  for (const FakeGpu& g : h.gpus) pci_set.insert(g.pci_bus_id);
  for (const FakeGpu& g : h.gpus)
    for (const std::string& p : g.nvlink_peers)
      if (!pci_set.count(p) || p == g.pci_bus_id)
        fail(path, g.uuid + ".nvlink_peers: " + p + " is not another GPU of this host");
  if (j.contains("cuda_default_order")) {
    h.cuda_default_order = get_or<std::vector<std::string>>(j, "cuda_default_order", {}, path, "");
    std::set<std::string> want, got(h.cuda_default_order.begin(), h.cuda_default_order.end());
    for (const FakeGpu& g : h.gpus)
      if (g.cuda_visible && !g.mig_enabled) want.insert(g.uuid);
    if (want != got || got.size() != h.cuda_default_order.size())
      fail(path, "cuda_default_order must list each GPU's UUID once (GPUs with MIG enabled or "
                 "cuda_visible false excluded)");
  }
  return h;
}
}  // namespace

}  // namespace gpumap::fake
