#include "session/session.h"

#include "session/container_facts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <iterator>

#include "driver/cuda_probe.h"
#include "formats/host_file.h"
#include "formats/pod_resources.h"
#include "model/env_vars.h"
#include "model/error.h"
#include "model/text.h"
#include "os/container.h"
#include "os/host_id.h"
#include "os/lease.h"
#include "os/order_cache.h"
#include "os/subprocess.h"
#include "resolve/container_view.h"

namespace gpumap {

Seams program_seams(const Environment& env, const std::optional<std::string>& simulate, const std::string& probe_argument) {
  Seams seams = seams_from_environment(env, exe_dir(), simulate);
  seams.probe_command = {self_exe(), probe_argument};
  return seams;
}

std::string simulated_boot_id(const std::string& host_file) {
  std::ifstream in(host_file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(text));
  return "simulated:" + host_file + ":" + hash;
}

DriverSource select_checked_driver(const Seams& seams) {
  DriverSource src = select_driver(seams);
  if (src.simulated) {
    try {
      SimHost h = load_host_file(src.host_file);
      // The `kubelet` object is gpumap-kubelet's document: checked here, as the rest of the file is.
      if (!h.kubelet.empty()) try {
          parse_pod_resources(h.kubelet);
        } catch (const std::exception& e) {
          throw std::runtime_error(src.host_file + ": kubelet: " + e.what());
        }
    } catch (const std::exception& e) {
      throw Error(kExitUsage, std::string("simulated host: ") + e.what(), "the format is in docs/host-file.md");
    }
  }
  return src;
}

const Snapshot& Session::snapshot(const ReadOptions& opt) {
  if (!snapshot_) snapshot_ = std::make_unique<Snapshot>(read_snapshot(driver_, opt));
  return *snapshot_;
}

const Snapshot& Session::reread(const ReadOptions& opt) {
  snapshot_ = std::make_unique<Snapshot>(read_snapshot(driver_, opt));
  return *snapshot_;
}

DriverAsk Session::driver_ask() const {
  DriverSource d = driver_;
  return [d](const Environment& e) { return probe_cuda(d, e); };
}

MappingOptions Session::mapping_options(bool fresh_order) const {
  MappingOptions opt;
  std::string dir = seams_.cache_dir;
  // A folder that cannot serve (issue 43: ignored in silence, every run then paid cuInit again)
  // is said once per run through the seams' notices, and by `doctor` as a finding.
  std::shared_ptr<RunNotices> notices = seams_.notices;
  auto say = [notices, dir](const std::string& why) {
    if (!why.empty() && notices) notices->add(cache_notice(dir, why));
  };
  if (!fresh_order)
    opt.cache_lookup = [dir, say](const OrderCacheKey& k) {
      std::string why;
      auto found = cache_lookup(dir, k, &why);
      say(why);
      return found;
    };
  opt.cache_store = [dir, say](const OrderCacheKey& k, const std::vector<std::string>& order) { say(cache_store(dir, k, order)); };
  // A simulated host is its own machine: key its cache on the file's content, not this boot, so
  // an edited host file never answers with the order cached for what it said before.
  opt.boot_id = driver_.simulated ? simulated_boot_id(driver_.host_file) : read_boot_id();
  return opt;
}

Mapping Session::mapping_in(const Snapshot& inside, const Environment& env) {
  MappingOptions opt = mapping_options(false);
  opt.subset = true;
  return resolve_mapping(inside, env, opt, driver_ask());
}

Mapping Session::mapping(const Environment& env, bool probe, bool fresh_order) {
  MappingOptions opt = mapping_options(fresh_order);
  opt.probe = probe;
  opt.subset = container_what_if_;
  if (probe && container_what_if_)
    throw Error(kExitUsage, "the driver cannot be asked about a container that does not exist: it sees the host's GPUs",
                "let the container's view be predicted (do not probe), or run gpumap inside the container");
  return resolve_mapping(snapshot(), env, opt, driver_ask());
}

bool Session::in_container() const {
  // A simulated host is bare metal: this machine's marks say nothing about it (a test may still
  // force it with GPUMAP_IN_CONTAINER=1).
  if (container_what_if_) return true;
  // A simulated host with a `container` object is a container on that host (docs/host-file.md).
  if (driver_.simulated && simulated_container(driver_)) return true;
  return driver_.simulated ? seams_.in_container_forced && seams_.in_container : seams_.in_container;
}

void Session::enter_container(const std::string& value) {
  ContainerView v = container_view(snapshot(), value);
  snapshot_ = std::make_unique<Snapshot>(std::move(v.snapshot));
  container_what_if_ = true;
}

std::optional<ContainerFacts> simulated_container(const DriverSource& driver) {
  if (!driver.simulated) return std::nullopt;
  // Read once per file (path, size and time: an edited file is read again); in_container() is asked often.
  static std::mutex m;
  static std::map<std::string, std::pair<std::string, std::optional<ContainerFacts>>> cache;
  struct stat st{};
  std::string stamp = stat(driver.host_file.c_str(), &st) == 0
                          ? std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec)
                          : "";
  std::lock_guard<std::mutex> g(m);
  auto it = cache.find(driver.host_file);
  if (it != cache.end() && it->second.first == stamp) return it->second.second;
  std::optional<ContainerFacts> c = load_host_file(driver.host_file).container;
  cache[driver.host_file] = {stamp, c};
  return c;
}

std::optional<ContainerFacts> container_facts_of(const Session& session) {
  if (session.driver().simulated) return simulated_container(session.driver());
  // This machine's own container only (never a `map --env NVIDIA_VISIBLE_DEVICES=...` what-if, which
  // predicts a container from the host: the host's /dev and capabilities are not that container's).
  const Seams& seams = session.seams();
  if (!seams.in_container) return std::nullopt;
  return read_container_facts("/dev", seams.sysfs_root + "/fs/cgroup", seams.proc_root);
}

namespace {
std::mutex g_frameworks_mutex;
std::optional<std::map<std::string, std::string>> g_frameworks;
}  // namespace

void set_process_frameworks(std::map<std::string, std::string> versions) {
  std::lock_guard<std::mutex> g(g_frameworks_mutex);
  g_frameworks = std::move(versions);
}

std::optional<std::map<std::string, std::string>> process_frameworks() {
  std::lock_guard<std::mutex> g(g_frameworks_mutex);
  return g_frameworks;
}

std::string simulated_kubelet(const DriverSource& driver) {
  return driver.simulated ? load_host_file(driver.host_file).kubelet : std::string();
}

std::string cache_notice(const std::string& dir, const std::string& problem) {
  return "gpumap: " + problem + ", so the driver's GPU order is not kept between runs: every run that needs it "
         "starts CUDA again (cuInit in a child process).  Fix: " + cache_dir_fix(dir, problem);
}

std::optional<Finding> cache_finding(const Session& s) {
  const std::string& dir = s.seams().cache_dir;
  std::string problem = cache_dir_problem(dir);
  if (problem.empty()) return std::nullopt;
  if (s.seams().notices) s.seams().notices->mark_said(cache_notice(dir, problem));  // said here, not again at the end
  Finding f;
  f.id = "cache-unusable";
  f.severity = Severity::kWarning;
  f.message = problem + ": the driver's GPU order (on hosts where NVML cannot give it: mixed models under "
              "FASTEST_FIRST, MIG) is not kept between runs, so every run that needs it starts CUDA again";
  f.note = cache_dir_fix(dir, problem);
  return f;
}

std::string Session::lease_dir() const { return gpumap::lease_dir(seams_.lock_dir); }

// Installed: the data and private library folders relative to bin/ (CMake sets them from the
// GNUInstallDirs layout; these are its defaults).
#ifndef GPUMAP_BIN_TO_HOSTS
#define GPUMAP_BIN_TO_HOSTS "../share/gpumap/hosts"
#endif
#ifndef GPUMAP_BIN_TO_SIM
#define GPUMAP_BIN_TO_SIM "../lib/gpumap/sim"
#endif

Seams seams_from_environment(const Environment& env, const std::string& install_dir,
                             const std::optional<std::string>& simulate) {
  auto nonempty = [&](std::string_view name) -> std::optional<std::string> {
    std::optional<std::string> v = env.get(name);
    return v && !v->empty() ? v : std::nullopt;
  };
  Seams s;
  s.simulate = simulate ? simulate : nonempty(env_var("GPUMAP_SIMULATE"));
  if (auto d = nonempty(env_var("GPUMAP_HOSTS_DIR"))) s.hosts_dirs.push_back(*d);
  s.hosts_dirs.push_back(install_dir + "/hosts");
  s.hosts_dirs.push_back(install_dir + "/" GPUMAP_BIN_TO_HOSTS);
  if (auto d = nonempty(env_var("GPUMAP_SIM_LIBDIR"))) s.sim_lib_dirs = {*d};
  else s.sim_lib_dirs = {install_dir + "/sim", install_dir + "/" GPUMAP_BIN_TO_SIM};
  s.lock_dir = env.get(env_var("GPUMAP_LOCK_DIR")).value_or("");
  if (auto d = nonempty(env_var("GPUMAP_CACHE_DIR"))) s.cache_dir = *d;
  else if (auto x = nonempty(env_var("XDG_CACHE_HOME"))) s.cache_dir = *x + "/gpumap";
  else if (auto h = nonempty(env_var("HOME"))) s.cache_dir = *h + "/.cache/gpumap";
  if (auto d = nonempty(env_var("GPUMAP_PROC_ROOT"))) s.proc_root = *d;
  if (auto d = nonempty(env_var("GPUMAP_SYSFS_ROOT"))) s.sysfs_root = *d;
  s.nvml_pid_ns = nonempty(env_var("GPUMAP_NVML_PID_NS"));
  if (auto f = env.get(env_var("GPUMAP_IN_CONTAINER"))) s.in_container = *f == "1", s.in_container_forced = true;
  else s.in_container = container_files_present() || env.get(env_var("container")).has_value();
  s.trace = env.get(env_var("GPUMAP_TRACE")).has_value();
  s.state_dir = state_dir_from(env, geteuid() == 0);
  if (auto t = nonempty(env_var("GPUMAP_DRIVER_TIMEOUT"))) s.driver_timeout_s = parse_driver_timeout(*t, "GPUMAP_DRIVER_TIMEOUT=");
  for (const std::string& helper : {install_dir + "/gpumap-kubelet", install_dir + "/" GPUMAP_BIN_TO_SIM "/../gpumap-kubelet"})
    if (s.kubelet_helper.empty() && access(helper.c_str(), X_OK) == 0) s.kubelet_helper = helper;
  if (auto k = nonempty(env_var("GPUMAP_KUBELET_SOCKET"))) s.kubelet_socket = *k;
  if (auto c = env.get(env_var("GPUMAP_CDI_DIRS"))) s.cdi_dirs = *c;  // "" (set, empty): no spec folder
  // Said here, as gpumap's own usage error (exit 2), rather than by gpumap-kubelet, which refuses
  // a relative folder too: a folder relative to wherever gpumap was started names no node's specs.
  for (const std::string& dir : split(s.cdi_dirs, ':'))
    if (!dir.empty() && dir[0] != '/')
      throw Error(kExitUsage, "GPUMAP_CDI_DIRS=`" + s.cdi_dirs + "`: `" + dir + "` is not an absolute path",
                  "name the CDI spec folders by absolute paths, separated by ':' (the default is /etc/cdi:/var/run/cdi; "
                  "set it empty for none)");
  return s;
}

double parse_driver_timeout(const std::string& text, const std::string& name) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0 && v <= 86400))
    throw Error(kExitUsage, name + "`" + text + "` is not a number of seconds (0 to 86400)",
                "leave it out (60 s), or 0 for no limit");
  return v;
}

std::string state_dir_from(const Environment& env, bool as_root) {
  auto nonempty = [&](std::string_view name) {
    std::optional<std::string> v = env.get(name);
    return v && !v->empty() ? v : std::nullopt;
  };
  if (auto d = nonempty(env_var("GPUMAP_STATE_DIR"))) return *d;
  if (as_root) return "/var/lib/gpumap";
  if (auto x = nonempty(env_var("XDG_STATE_HOME"))) return *x + "/gpumap";
  if (auto h = nonempty(env_var("HOME"))) return *h + "/.local/state/gpumap";
  return "";
}

}  // namespace gpumap
