// libgpumap.so: the C API (include/gpumap/gpumap.h) over the session layer.  Parse the JSON
// request, call one operation, render its plain result as JSON; every exception becomes a
// status and this thread's last error.
#include "gpumap/gpumap.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "model/error.h"
#include "model/text.h"
#include "os/proc.h"
#include "output/render.h"
#include "session/devices.h"
#include "session/lease_gpus.h"
#include "session/verify.h"

extern char** environ;

struct gpumap_session {
  gpumap::Seams seams;
  gpumap::DriverSource driver;
  std::unique_ptr<gpumap::Session> cached;  // for the read-only calls: the GPU list rarely changes
};

namespace gpumap {
namespace {

constexpr int kExitTooLate = GPUMAP_TOO_LATE;

/// The process's environment now (Python's os.environ writes through to it).
Environment process_environment() {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return Environment::from_strings(entries);
}

thread_local std::string t_last_error;

void set_error(Json j) { t_last_error = j.dump(); }

/// Runs `body`; turns each exception into a status and the thread's last error.
template <class F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const UnavailableError& e) {
    Json rej = Json::array();
    for (const Rejection& x : e.passed_over())
      rej.push_back({{"nvml_index", x.nvml_index}, {"uuid", x.uuid}, {"reasons", x.reasons}});
    set_error({{"code", e.exit_code()}, {"message", e.what()}, {"hint", e.hint()}, {"passed_over", rej}});
    return e.exit_code();
  } catch (const Error& e) {
    set_error({{"code", e.exit_code()}, {"message", e.what()}, {"hint", e.hint()}});
    return e.exit_code();
  } catch (const Json::exception& e) {
    set_error({{"code", kExitUsage}, {"message", std::string("malformed JSON argument: ") + e.what()}, {"hint", ""}});
    return kExitUsage;
  } catch (const std::exception& e) {
    set_error({{"code", kExitError}, {"message", std::string("internal error: ") + e.what()}, {"hint", ""}});
    return kExitError;
  }
}

int give(const Json& result, char** out) {
  if (out) *out = strdup(result.dump().c_str());
  return GPUMAP_OK;
}

/// Parses an object argument and checks its keys against `allowed`.
Json parse_object(const char* text, const char* what, const std::set<std::string>& allowed) {
  if (!text || !*text) return Json::object();
  Json j = Json::parse(text);
  if (!j.is_object()) throw Error(kExitUsage, std::string(what) + " must be a JSON object");
  for (const auto& [k, v] : j.items())
    if (!allowed.count(k)) {
      std::string names;
      for (const std::string& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw Error(kExitUsage, std::string(what) + ": unknown option `" + k + "`", "known: " + names);
    }
  return j;
}

/// A list of GPU names: strings, or integers (nvidia-smi indices).
std::vector<std::string> gpu_list(const Json& j, const char* what) {
  if (j.is_null()) return {};
  if (!j.is_array()) throw Error(kExitUsage, std::string(what) + " must be a list of GPUs");
  std::vector<std::string> out;
  for (const Json& x : j) {
    if (x.is_number_integer()) out.push_back(std::to_string(x.get<long long>()));
    else if (x.is_string()) out.push_back(x.get<std::string>());
    else throw Error(kExitUsage, std::string(what) + ": `" + x.dump() + "` is not a GPU (an nvidia-smi index or a string)");
  }
  return out;
}

std::string string_option(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  if (!j[key].is_string()) throw Error(kExitUsage, std::string("option `") + key + "` must be a string");
  return j[key].get<std::string>();
}

std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gpumap_api_version), &info) && info.dli_fname) {
    std::string p = info.dli_fname;
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
  }
  return ".";
}

bool executable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

/// The seams of a library user: from the options only, with the data files found next to
/// the library (build tree) or in the install tree around it (lib/, lib/<multiarch>/).
Seams library_seams(const Json& o) {
  std::string lib = library_dir();
  Seams s = seams_from_environment(Environment(), lib);
  s.cache_dir.clear();
  s.hosts_dirs.push_back(lib + "/../../share/gpumap/hosts");
  s.sim_lib_dirs = {lib + "/sim", lib + "/gpumap/sim", lib + "/../lib/gpumap/sim"};
  for (const std::string& p : {lib + "/gpumap-probe", lib + "/gpumap/gpumap-probe", lib + "/../libexec/gpumap/gpumap-probe"})
    if (executable(p)) {
      s.probe_command = {p};
      break;
    }
  if (std::string v = string_option(o, "simulate"); !v.empty()) s.simulate = v;
  s.lock_dir = string_option(o, "lock_dir");
  s.cache_dir = string_option(o, "cache_dir");
  if (std::string v = string_option(o, "hosts_dir"); !v.empty()) s.hosts_dirs.insert(s.hosts_dirs.begin(), v);
  if (std::string v = string_option(o, "sim_lib_dir"); !v.empty()) s.sim_lib_dirs = {v};
  if (std::string v = string_option(o, "probe"); !v.empty()) s.probe_command = {v};
  if (o.contains("driver_timeout") && !o["driver_timeout"].is_null()) {
    const Json& t = o["driver_timeout"];
    if (!t.is_string() && !t.is_number())
      throw Error(kExitUsage, "option `driver_timeout` must be a number of seconds (or a string holding one)");
    s.driver_timeout_s = parse_driver_timeout(t.is_string() ? t.get<std::string>() : t.dump(),
                                             "option driver_timeout (the Python package: GPUMAP_DRIVER_TIMEOUT) ");
  }
  return s;
}

/// The session for read-only calls, seeing the process's environment as it is now.
Session& current(gpumap_session* h) {
  if (!h) throw Error(kExitUsage, "no session (gpumap_open failed or was not called)");
  if (!h->cached) h->cached = std::make_unique<Session>(h->driver, Environment(), h->seams);
  h->cached->env() = process_environment();
  return *h->cached;
}

/// What devices(), verify(), which() and max_memory() need: identities, names, MIG devices.
/// Not utilisation (3.7 ms per GPU, measured on H200), processes or topology.
constexpr ReadOptions kDevicesRead{.processes = false, .topology = false, .nvlink = false, .mig = true, .utilization = false};

Json devices_json(const std::vector<VisibleDevice>& devs) {
  Json a = Json::array();
  for (const VisibleDevice& d : devs)
    a.push_back({{"cuda_ordinal", d.ordinal},
                 {"nvml_index", json_or_null(d.nvml_index)},
                 {"uuid", d.uuid},
                 {"pci_bus_id", json_or_null(d.pci_bus_id)},
                 {"name", json_or_null(d.name)}});
  return a;
}

std::mutex g_leases_mutex;
std::map<int, std::vector<Lease>> g_leases;
int g_next_lease = 1;

std::vector<std::string> own_command() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return split_nul(text);
}

}  // namespace
}  // namespace gpumap

using namespace gpumap;

extern "C" {

int gpumap_api_version(void) { return GPUMAP_API_VERSION; }

const char* gpumap_version(void) { return GPUMAP_VERSION; }

int gpumap_open(const char* options_json, gpumap_session** out) {
  if (out) *out = nullptr;
  return guarded([&] {
    if (!out) throw Error(kExitUsage, "gpumap_open: the session pointer is NULL");
    Json o = parse_object(options_json, "gpumap_open options",
                          {"simulate", "lock_dir", "cache_dir", "hosts_dir", "sim_lib_dir", "probe", "driver_timeout"});
    auto h = std::make_unique<gpumap_session>();
    h->seams = library_seams(o);
    h->driver = select_checked_driver(h->seams);
    *out = h.release();
    return GPUMAP_OK;
  });
}

void gpumap_close(gpumap_session* session) { delete session; }

int gpumap_devices(gpumap_session* h, char** out) {
  return guarded([&] {
    Session& s = current(h);
    const Snapshot& snap = s.snapshot(kDevicesRead);
    Mapping m = s.mapping();
    if (m.view.error != CudaInitError::kNone) {
      std::string name = cuda_error_name(m.view.error);
      set_error({{"code", kExitCudaWouldFail},
                 {"message", "CUDA would fail to initialise here: " + name + " (" +
                                 std::to_string(cuda_error_code(m.view.error)) + "), because " + m.view.error_reason},
                 {"hint", "fix or unset CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER before CUDA starts "
                          "(`gpumap map` shows the details)"},
                 {"cuda_error", name}});
      return static_cast<int>(kExitCudaWouldFail);
    }
    return give({{"devices", devices_json(visible_devices(snap, m))}, {"source", m.source}, {"order_note", m.order_note}},
                out);
  });
}

int gpumap_verify(gpumap_session* h, const char* request_json, char** out) {
  return guarded([&] {
    Json r = parse_object(request_json, "gpumap_verify request", {"expect", "prefix"});
    Session& s = current(h);
    s.snapshot(kDevicesRead);
    bool prefix = r.value("prefix", false);
    Verification v = verify_gpus(s, s.env(), gpu_list(r.value("expect", Json()), "expect"), prefix, false);
    Json fix = v.fix.empty() ? Json(nullptr) : Json({{"CUDA_VISIBLE_DEVICES", v.fix}});
    Json result = {{"ok", v.code == kExitOk}, {"expected", v.expected}, {"actual", v.mapping.view.uuids},
                   {"differences", v.differences}, {"fix", fix}};
    give(result, out);
    if (v.code == kExitOk) return GPUMAP_OK;
    std::string what = v.code == kExitCudaWouldFail ? "CUDA would not initialise: " : "the visible GPUs are not the expected ones: ";
    set_error({{"code", v.code},
               {"message", what + join(v.differences, "; ")},
               {"hint", "set CUDA_VISIBLE_DEVICES=" + v.fix + " before CUDA starts (or run under `gpumap run`)"},
               {"differences", v.differences},
               {"fix", fix}});
    return v.code;
  });
}

int gpumap_locate(gpumap_session* h, const char* gpus_json, char** out) {
  return guarded([&] {
    Session& s = current(h);
    const Snapshot& snap = s.snapshot(kDevicesRead);
    std::vector<std::string> specs = gpu_list(Json::parse(gpus_json ? gpus_json : "[]"), "gpus");
    Mapping m = s.mapping();
    Json a = Json::array();
    for (const LocatedGpu& l : locate_gpus(snap, m, specs))
      a.push_back({{"spec", l.spec}, {"uuid", l.uuid}, {"nvml_index", l.nvml_index}, {"cuda_ordinal", json_or_null(l.cuda_ordinal)}});
    std::vector<std::string> uuids;
    for (const Json& g : a) uuids.push_back(g["uuid"].get<std::string>());
    return give({{"gpus", a}, {"environment", {{"CUDA_VISIBLE_DEVICES", cvd_uuid_form(snap, uuids)}}}}, out);
  });
}

int gpumap_pin(gpumap_session* h, const char* request_json, char** out) {
  return guarded([&] {
    if (!h) throw Error(kExitUsage, "no session (gpumap_open failed or was not called)");
    Json r = parse_object(request_json, "gpumap_pin request",
                          {"gpus", "min_free_mib", "max_util", "include", "exclude", "allow_busy", "wait", "command"});
    if (gpumap_cuda_initialized())
      throw Error(kExitTooLate,
                  "CUDA is already initialised in this process: CUDA_VISIBLE_DEVICES set now would change nothing",
                  "pin before anything starts CUDA (before torch.cuda is used, ideally at the top of the program)");
    PickRequest req;
    req.count = r.value("gpus", 1);
    if (req.count < 1 || req.count > 4096) throw Error(kExitUsage, "gpus must be between 1 and 4096, not " + std::to_string(req.count));
    if (r.contains("min_free_mib") && !r["min_free_mib"].is_null()) req.min_free_mib = r["min_free_mib"].get<uint64_t>();
    if (r.contains("max_util") && !r["max_util"].is_null()) {
      long long u = r["max_util"].get<long long>();
      if (u < 0 || u > 100) throw Error(kExitUsage, "max_util must be a percentage (0-100), not " + std::to_string(u));
      req.max_util = static_cast<uint32_t>(u);
    }
    for (const std::string& g : gpu_list(r.value("include", Json()), "include"))
      for (const std::string& p : split_gpu_specs(g)) req.include.push_back(p);
    for (const std::string& g : gpu_list(r.value("exclude", Json()), "exclude"))
      for (const std::string& p : split_gpu_specs(g)) req.exclude.push_back(p);
    req.allow_busy = r.value("allow_busy", false);
    LeaseOptions lo;
    lo.what = "pin";
    lo.wait_s = r.contains("wait") && !r["wait"].is_null() ? r["wait"].get<double>() : 0;
    if (lo.wait_s < 0) throw Error(kExitUsage, "wait must be 0 or more seconds");
    lo.argv = r.contains("command") ? r["command"].get<std::vector<std::string>>() : own_command();
    lo.names = {.gpus = "gpus=", .wait = "wait=SECONDS", .allow_busy = "allow_busy=True",
                .limits = "include/exclude/min_free_mib"};
    Session s(h->driver, process_environment(), h->seams);
    LeasedGpus held = lease_gpus(s, req, lo);

    Environment pinned = s.env();
    pinned.set("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    pinned.set("CUDA_VISIBLE_DEVICES", join(held.uuids, ","));
    Json devices = devices_json(visible_devices(s.snapshot(), s.mapping(pinned, false)));
    std::lock_guard<std::mutex> lock(g_leases_mutex);
    int id = g_next_lease++;
    g_leases[id] = std::move(held.leases);
    return give({{"lease", id},
                 {"lease_dir", held.dir},
                 {"devices", devices},
                 {"environment", {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", join(held.uuids, ",")}}}},
                out);
  });
}

int gpumap_release(int lease) {
  return guarded([&] {
    std::lock_guard<std::mutex> lock(g_leases_mutex);
    auto it = g_leases.find(lease);
    if (it == g_leases.end())
      throw Error(kExitUsage, "lease " + std::to_string(lease) + " is not held by this process (released already?)");
    g_leases.erase(it);  // closing the lock files releases them
    return GPUMAP_OK;
  });
}

int gpumap_cuda_initialized(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return 0;
  // Before cuInit every driver call answers CUDA_ERROR_NOT_INITIALIZED; this one allocates nothing.
  using FnCount = int(int*);
  auto count = reinterpret_cast<FnCount*>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  int rc = count ? count(&n) : 3;
  dlclose(lib);
  return rc == 0 ? 1 : 0;
}

const char* gpumap_last_error(void) { return t_last_error.c_str(); }

void gpumap_free(char* result_json) { free(result_json); }

}  // extern "C"
