// libgpumap.so: the C API (include/gpumap/gpumap.h) over the session layer.  Parse the JSON
// request, call one operation, render its plain result as JSON; every exception becomes a
// status and this thread's last error.
#include "gpumap/gpumap.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "model/env_vars.h"
#include "model/error.h"
#include "model/exit_codes.h"
#include "model/json_bounds.h"
#include "model/limits.h"
#include "model/text.h"
#include "output/json_view.h"
#include "output/self_view.h"
#include "session/container_facts.h"
#include "session/diagnose.h"
#include "session/self.h"

extern char** environ;

struct gpumap_session {
  gpumap::Seams seams;
  gpumap::DriverSource driver;
  std::unique_ptr<gpumap::Session> cached;  // for the read-only calls: the GPU list rarely changes
};

namespace gpumap {
namespace {


// The C header's status codes are the command's exit codes (model/error.h), and TOO_LATE,
// the library's own, is none of them.
static_assert(GPUMAP_OK == kExitOk && GPUMAP_ERROR == kExitError && GPUMAP_USAGE == kExitUsage &&
                  GPUMAP_NO_DRIVER == kExitNoDriver && GPUMAP_MISMATCH == kExitMismatch &&
                  GPUMAP_CUDA_WOULD_FAIL == kExitCudaWouldFail && GPUMAP_UNAVAILABLE == kExitUnavailable,
              "include/gpumap/gpumap.h and src/model/error.h disagree on an exit code");
static_assert(GPUMAP_TOO_LATE == kExitTooLate, "GPUMAP_TOO_LATE is exit_codes.h's library-only code (src/model/error.h)");

/// The process's environment now (Python's os.environ writes through to it).
Environment process_environment() {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return Environment::from_strings(entries);
}

thread_local std::string t_last_error;

/// JSON text that cannot throw on bytes from outside: malformed UTF-8 (an environment value, a
/// caller's argument) becomes U+FFFD instead of nlohmann's type_error.316.
std::string safe_dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void set_error(const Json& j) noexcept {
  try {
    t_last_error = safe_dump(j);
  } catch (...) {  // out of memory: a fixed message, never an exception out of the library
    t_last_error = "{\"code\": 1, \"message\": \"internal error (out of memory)\", \"hint\": \"\"}";
  }
}

/// An error whose last-error object carries more keys than code, message and hint (pin's
/// passed_over).
struct DetailedError : Error {
  DetailedError(const Error& e, Json more) : Error(e.exit_code(), e.what(), e.hint()), details(std::move(more)) {}
  Json details;
};

template <class F>
int guarded_body(F& body);

/// Runs `body`; turns each exception into a status and the thread's last error.  Nothing
/// escapes: a library never takes its caller down.
template <class F>
int guarded(F&& body) noexcept {
  try {
    return guarded_body(body);
  } catch (...) {
    set_error({{"code", kExitError}, {"message", "internal error (unknown exception)"}, {"hint", ""}});
    return kExitError;
  }
}

template <class F>
int guarded_body(F& body) {
  try {
    return body();
  } catch (const DetailedError& e) {
    Json j = {{"code", e.exit_code()}, {"message", e.what()}, {"hint", e.hint()}};
    j.update(e.details);
    set_error(j);
    return e.exit_code();
  } catch (const Error& e) {
    set_error({{"code", e.exit_code()}, {"message", e.what()}, {"hint", e.hint()}});
    return e.exit_code();
  } catch (const Json::exception& e) {
    set_error({{"code", kExitUsage}, {"message", std::string("malformed JSON argument: ") + e.what()}, {"hint", ""}});
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    set_error({{"code", kExitError}, {"message", "internal error: out of memory"}, {"hint", ""}});
    return kExitError;
  } catch (const std::exception& e) {
    set_error({{"code", kExitError}, {"message", std::string("internal error: ") + e.what()}, {"hint", ""}});
    return kExitError;
  }
}

int give(const Json& result, char** out) {
  if (out) {
    *out = strdup(safe_dump(result).c_str());
    if (!*out) throw std::bad_alloc();
  }
  return GPUMAP_OK;
}

/// A JSON argument, within the one bound every JSON reader has (model/json_bounds.h).
Json parse_argument(const char* text, const std::string& what) {
  std::string_view t(text ? text : "");
  if (auto why = json_bounds_error(t))
    throw Error(kExitUsage, what + " is refused: " + *why, "pass a flat JSON value (a list of GPUs, an object of options)");
  return Json::parse(t);
}

/// Parses an object argument and checks its keys against `allowed`.
Json parse_object(const char* text, const char* what, const std::set<std::string>& allowed) {
  if (!text || !*text) return Json::object();
  Json j = parse_argument(text, what);
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
    if (x.is_number_integer()) out.push_back(safe_dump(x));
    else if (x.is_string()) out.push_back(x.get<std::string>());
    else throw Error(kExitUsage, std::string(what) + ": `" + safe_dump(x) + "` is not a GPU (an nvidia-smi index or a string)");
  }
  return out;
}

/// A number option within its bound (model/limits.h, the command line's too); nullopt when absent
/// or null.  Error(kExitUsage) naming `key` for anything else: a string, true, 1.5 for a whole
/// number, or a value out of range (2**64, -1, 1e308).
std::optional<double> number_option(const Json& j, const char* key, const NumberBound& b) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const Json& v = j[key];
  auto range = [&] {
    return (b.integer ? std::string(" a whole number from ") : std::string(" a number from ")) + short_number(b.min) +
           " to " + short_number(b.max) + ", not " + safe_dump(v);
  };
  if (!v.is_number()) throw Error(kExitUsage, std::string("`") + key + "` must be" + range());
  if (b.integer && v.is_number_float()) throw Error(kExitUsage, std::string("`") + key + "` must be" + range());
  double x = v.is_number_unsigned() ? static_cast<double>(v.get<uint64_t>())
             : v.is_number_integer() ? static_cast<double>(v.get<int64_t>())
                                     : v.get<double>();
  if (!(x >= b.min && x <= b.max)) throw Error(kExitUsage, std::string("`") + key + "` must be" + range());
  return x;
}

bool bool_option(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return false;
  if (!j[key].is_boolean()) throw Error(kExitUsage, std::string("`") + key + "` must be true or false, not " + safe_dump(j[key]));
  return j[key].get<bool>();
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

/// The "environment" option: an object of variable names to string values (the caller's own
/// GPUMAP_* and the like, raw); only the seam variables of kEnvVars count.
Environment environment_option(const Json& o) {
  if (!o.contains("environment") || o["environment"].is_null()) return Environment();
  const Json& e = o["environment"];
  if (!e.is_object()) throw Error(kExitUsage, "option `environment` must be an object of variable names to strings");
  std::vector<std::string> entries;
  for (const auto& [name, value] : e.items()) {
    if (!value.is_string())
      throw Error(kExitUsage, "option `environment`: the value of `" + printable(name) + "` must be a string");
    const EnvVarInfo* v = find_env_var(name);
    if (v && (v->readers & kEnvSeams)) entries.push_back(name + "=" + value.get<std::string>());
  }
  return Environment::from_strings(entries);
}

/// The seams of a library user: from its options only (the "environment" option read as the
/// command reads its own environment, then the named options), with the data files found next
/// to the library (build tree) or in the install tree around it (lib/, lib/<multiarch>/).
Seams library_seams(const Json& o) {
  std::string lib = library_dir();
  Environment env = environment_option(o);
  Seams s = seams_from_environment(env, lib);
  s.hosts_dirs.push_back(lib + "/../../share/gpumap/hosts");
  if (!env.get(env_var("GPUMAP_SIM_LIBDIR")).value_or("").size())
    s.sim_lib_dirs = {lib + "/sim", lib + "/gpumap/sim", lib + "/../lib/gpumap/sim"};
  for (const std::string& p : {lib + "/gpumap-probe", lib + "/gpumap/gpumap-probe", lib + "/../libexec/gpumap/gpumap-probe"})
    if (executable(p)) {
      s.probe_command = {p};
      break;
    }
  if (std::string v = string_option(o, "simulate"); !v.empty()) s.simulate = v;
  if (o.contains("lock_dir")) s.lock_dir = string_option(o, "lock_dir");
  if (o.contains("cache_dir")) s.cache_dir = string_option(o, "cache_dir");
  if (std::string v = string_option(o, "hosts_dir"); !v.empty()) s.hosts_dirs.insert(s.hosts_dirs.begin(), v);
  if (std::string v = string_option(o, "sim_lib_dir"); !v.empty()) s.sim_lib_dirs = {v};
  if (std::string v = string_option(o, "probe"); !v.empty()) s.probe_command = {v};
  if (o.contains("driver_timeout") && !o["driver_timeout"].is_null()) {
    const Json& t = o["driver_timeout"];
    if (!t.is_string() && !t.is_number())
      throw Error(kExitUsage, "option `driver_timeout` must be a number of seconds (or a string holding one)");
    s.driver_timeout_s = parse_driver_timeout(t.is_string() ? t.get<std::string>() : t.dump(), "option driver_timeout ");
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

std::mutex g_leases_mutex;
std::map<int, std::vector<Lease>> g_leases;
int g_next_lease = 1;

// fork() while another thread holds g_leases_mutex (a pin finishing) would leave it locked
// forever in the child (issue 34 point 5): the forking thread takes it first, and both sides
// let go after the fork.  The driver reader threads have their own handlers (driver/driver_thread.h).
void lock_leases_for_fork() { g_leases_mutex.lock(); }
void unlock_leases_after_fork() { g_leases_mutex.unlock(); }
[[maybe_unused]] const int g_fork_handlers =
    pthread_atfork(lock_leases_for_fork, unlock_leases_after_fork, unlock_leases_after_fork);


}  // namespace
}  // namespace gpumap

using namespace gpumap;

extern "C" {

int gpumap_api_version(void) { return GPUMAP_API_VERSION; }

const char* gpumap_version(void) { return GPUMAP_VERSION; }

const char* gpumap_environment_variables(void) {
  static const std::string text = []() noexcept -> std::string {
    try {
      Json a = Json::array();
    for (const EnvVarInfo& v : kEnvVars) {
      Json readers = Json::array();
      for (EnvReader r : kEnvReaders)
        if (v.readers & r) readers.push_back(env_reader_name(r));
      a.push_back({{"name", v.name}, {"meaning", v.meaning}, {"read_by", readers}});
    }
    return a.dump();
    } catch (...) {  // out of memory: an empty list, never an exception out of the library
      return "[]";
    }
  }();
  return text.c_str();
}

int gpumap_open(const char* options_json, gpumap_session** out) {
  if (out) *out = nullptr;
  return guarded([&] {
    if (!out) throw Error(kExitUsage, "gpumap_open: the session pointer is NULL");
    Json o = parse_object(options_json, "gpumap_open options",
                          {"simulate", "lock_dir", "cache_dir", "hosts_dir", "sim_lib_dir", "probe", "driver_timeout",
                           "environment"});
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
    DevicesAnswer a = devices_here(current(h));
    if (a.refusal) {
      set_error(refusal_json(*a.refusal));
      return a.refusal->code;
    }
    return give(devices_answer_json(a), out);
  });
}

int gpumap_local_device(gpumap_session* h, char** out) {
  return guarded([&] {
    LocalDeviceAnswer a = local_device_here(current(h));
    Json j = local_device_answer_json(a);
    if (a.refusal) {
      Json e = refusal_json(*a.refusal);
      e.update(j);
      set_error(e);
      return a.refusal->code;
    }
    return give(j, out);
  });
}

int gpumap_check_devices(gpumap_session* h, const char* request_json, char** out) {
  return guarded([&] {
    Json r = parse_object(request_json, "gpumap_check_devices request", {"items"});
    const Json& list = r.contains("items") ? r["items"] : Json::array();
    if (!list.is_array()) throw Error(kExitUsage, "gpumap_check_devices: `items` must be a list of objects");
    std::vector<DeviceItem> items;
    for (const Json& j : list) {
      if (!j.is_object()) throw Error(kExitUsage, "gpumap_check_devices: each item must be an object");
      DeviceItem item;
      std::string role = j.value("role", std::string("value"));
      if (role == "key") item.role = DeviceItem::Role::kKey;
      else if (role == "physical_key") item.role = DeviceItem::Role::kPhysicalKey;
      else if (role != "value")
        throw Error(kExitUsage, "gpumap_check_devices: role `" + printable(role) + "`", "known: value, key, physical_key");
      const Json& v = j.contains("value") ? j["value"] : Json();
      if (v.is_number_integer()) item.number = v.get<int64_t>();
      else if (v.is_string()) item.text = v.get<std::string>();
      else throw Error(kExitUsage, "gpumap_check_devices: an item's `value` must be an int or a string");
      item.what = j.value("what", std::string("device"));
      item.where = j.value("where", std::string());
      item.shown = j.value("shown", v.dump());
      items.push_back(std::move(item));
    }
    DeviceItemsAnswer a = check_devices_here(current(h), items);
    if (a.refusal) {
      set_error(device_items_refusal_json(a));
      return a.refusal->code;
    }
    return give(device_items_json(a), out);
  });
}

int gpumap_verify(gpumap_session* h, const char* request_json, char** out) {
  return guarded([&] {
    Json r = parse_object(request_json, "gpumap_verify request", {"expect", "prefix"});
    VerifyAnswer a = verify_here(current(h), gpu_list(r.value("expect", Json()), "expect"), bool_option(r, "prefix"));
    give(verify_answer_json(a), out);  // the result is given on a mismatch too
    if (!a.refusal) return GPUMAP_OK;
    set_error(verify_refusal_json(a));
    return a.refusal->code;
  });
}

int gpumap_locate(gpumap_session* h, const char* gpus_json, char** out) {
  return guarded([&] {
    Session& s = current(h);
    std::vector<std::string> specs = gpu_list(parse_argument(gpus_json ? gpus_json : "[]", "gpumap_locate GPUs"), "gpus");
    return give(locate_answer_json(locate_here(s, specs)), out);
  });
}

}  // extern "C" (a C++ helper between the exported functions: it returns a C++ type)

/// ProgramFacts from gpumap_diagnose's request.
ProgramFacts program_facts(const Json& r) {
  ProgramFacts p;
  if (r.contains("current_device") && !r["current_device"].is_null()) {
    const Json& c = r["current_device"];
    if (!c.is_number_integer() || c.get<long long>() < 0 || c.get<long long>() > 4095)
      throw Error(kExitUsage, "`current_device` must be a CUDA ordinal (0 to 4095), not " + safe_dump(c));
    p.current_device = c.get<int>();
  }
  auto string_map = [&](const char* key) {
    std::map<std::string, std::string> m;
    if (!r.contains(key) || r[key].is_null()) return m;
    if (!r[key].is_object()) throw Error(kExitUsage, std::string("`") + key + "` must be an object");
    for (const auto& [k, v] : r[key].items()) m[k] = v.is_string() ? v.get<std::string>() : safe_dump(v);
    return m;
  };
  if (r.contains("tensor_devices") && !r["tensor_devices"].is_null()) {
    if (!r["tensor_devices"].is_object()) throw Error(kExitUsage, "`tensor_devices` must be an object {device: count}");
    for (const auto& [k, v] : r["tensor_devices"].items()) {
      if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
        throw Error(kExitUsage, "`tensor_devices` counts must be whole numbers, not " + safe_dump(v));
      p.tensor_devices[k] = v.get<uint64_t>();
    }
  }
  if (r.contains("hf_device_map") && !r["hf_device_map"].is_null()) p.hf_device_map = string_map("hf_device_map");
  p.max_memory = string_map("max_memory");
  return p;
}

extern "C" {

int gpumap_pin(gpumap_session* h, const char* request_json, char** out) {
  return guarded([&] {
    if (!h) throw Error(kExitUsage, "no session (gpumap_open failed or was not called)");
    Json r = parse_object(request_json, "gpumap_pin request",
                          {"gpus", "min_free_mib", "max_util", "include", "exclude", "allow_busy", "allow_unknown", "wait",
                           "command", "interrupt_fd"});
    PickRequest req;
    req.count = static_cast<int>(number_option(r, "gpus", kBoundGpus).value_or(1));
    if (auto m = number_option(r, "min_free_mib", kBoundMinFreeMib)) req.min_free_mib = static_cast<uint64_t>(*m);
    if (auto u = number_option(r, "max_util", kBoundMaxUtil)) req.max_util = static_cast<uint32_t>(*u);
    for (const std::string& g : gpu_list(r.value("include", Json()), "include"))
      for (const std::string& p : split_gpu_specs(g)) req.include.push_back(p);
    for (const std::string& g : gpu_list(r.value("exclude", Json()), "exclude"))
      for (const std::string& p : split_gpu_specs(g)) req.exclude.push_back(p);
    req.allow_busy = bool_option(r, "allow_busy");
    req.allow_unknown = bool_option(r, "allow_unknown");
    LeaseOptions lo;
    lo.what = "pin";
    lo.wait_s = number_option(r, "wait", kBoundWaitSeconds).value_or(0);
    if (r.contains("interrupt_fd") && !r["interrupt_fd"].is_null()) {
      const Json& fd = r["interrupt_fd"];
      if (!fd.is_number_integer() || fd.get<long long>() < 0 || fd.get<long long>() > INT_MAX)
        throw Error(kExitUsage, "`interrupt_fd` must be an open file descriptor (a whole number from 0), not " + safe_dump(fd));
      lo.interrupt_fd = fd.get<int>();
    }
    if (r.contains("command") && !r["command"].is_null()) {
      const Json& c = r["command"];
      if (!c.is_array() || c.empty() || !std::all_of(c.begin(), c.end(), [](const Json& x) { return x.is_string(); }))
        throw Error(kExitUsage, "`command` must be a non-empty list of strings (the program's argv, for the lease record)");
    }
    lo.argv = r.contains("command") && !r["command"].is_null() ? r["command"].get<std::vector<std::string>>() : read_self_process(false, 0).command;
    req.names = {.gpus = "gpus=", .wait = "wait=SECONDS", .allow_busy = "allow_busy=True",
                 .allow_unknown = "allow_unknown=True", .include = "include=", .exclude = "exclude=",
                 .limits = "include/exclude/min_free_mib"};
    {  // GPUs an earlier pin of this process holds: named as its own, with its lease id
      std::lock_guard<std::mutex> lock(g_leases_mutex);
      std::string ids;
      for (const auto& [id, leases] : g_leases)
        if (!leases.empty()) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
      if (!ids.empty())
        lo.own_lease_fix = "this process already holds them (pin lease " + ids +
                           "): reuse that pin (CUDA_VISIBLE_DEVICES already names its GPUs), or release it first "
                           "(Python: Pinned.release() or leaving its `with` block; C: gpumap_release(" +
                           ids.substr(0, ids.find(',')) + ")) and pin again";
    }
    Session s(h->driver, process_environment(), h->seams);
    LeasedGpus held;
    PinAnswer a = [&] {
      try {
        return pin_here(s, req, lo, held);
      } catch (const UnavailableError& e) {  // what was passed over, as pick's JSON names it
        throw DetailedError(e, {{"passed_over", passed_over_json(s.snapshot(), e.passed_over())}});
      } catch (const InterruptedError& e) {  // the caller's interrupt_fd: a retry may follow
        throw DetailedError(e, {{"interrupted", true}});
      }
    }();
    std::lock_guard<std::mutex> lock(g_leases_mutex);
    int id = g_next_lease++;
    g_leases[id] = std::move(held.leases);
    return give(pin_answer_json(a, id), out);
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
  try {
    return cuda_started_here(DriverSource().driver_timeout_s) ? 1 : 0;  // no session: the default bound
  } catch (...) {
    return 0;
  }
}

int gpumap_diagnose(gpumap_session* h, const char* request_json, char** out) {
  return guarded([&] {
    Json r = parse_object(request_json, "gpumap_diagnose request",
                          {"current_device", "tensor_devices", "hf_device_map", "max_memory", "frameworks"});
    ProgramFacts program = program_facts(r);
    Session& s = current(h);
    // The frameworks the program imported (Python: sys.modules), for framework-cannot-parse-uuid.
    if (r.contains("frameworks") && r["frameworks"].is_object()) {
      std::map<std::string, std::string> versions;
      for (const auto& [k, v] : r["frameworks"].items())
        if (v.is_string()) versions[k] = v.get<std::string>();
      set_process_frameworks(versions);
    }
    SelfProcess self = read_self_process(true, s.driver().driver_timeout_s);
    return give(diagnosis_json(diagnose_self(s, self, program)), out);
  });
}

const char* gpumap_last_error(void) { return t_last_error.c_str(); }

void gpumap_free(char* result_json) { free(result_json); }

}  // extern "C"
