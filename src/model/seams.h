// The seams: every path and switch that tests, simulated hosts and library users redirect.
// One plain struct, built once by the program that owns the process (the CLI's main from
// its environment, a library user from its own options) and passed down, so no layer below
// reads GPUMAP_* variables or execs the running program behind its caller's back.
#pragma once
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// What a run met that is no operation's answer and is said once by the program that owns the
/// process (the CLI: on stderr, when the command ends), however many sessions, frames or GPUs
/// met it: an order cache folder that cannot be used.  Thread-safe (top reads in a thread).
class RunNotices {
 public:
  /// Adds `line` unless it is already there (or was said another way: mark_said).
  void add(const std::string& line) {
    std::lock_guard<std::mutex> g(m_);
    if (std::find(said_.begin(), said_.end(), line) == said_.end() &&
        std::find(lines_.begin(), lines_.end(), line) == lines_.end())
      lines_.push_back(line);
  }
  /// The command said it itself (doctor's finding): not again at the end.
  void mark_said(const std::string& line) {
    std::lock_guard<std::mutex> g(m_);
    said_.push_back(line);
    lines_.erase(std::remove(lines_.begin(), lines_.end(), line), lines_.end());
  }
  /// The lines not said yet, each once; later calls return only newer ones.
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> g(m_);
    std::vector<std::string> out;
    out.swap(lines_);
    said_.insert(said_.end(), out.begin(), out.end());
    return out;
  }

 private:
  std::mutex m_;
  std::vector<std::string> lines_;
  std::vector<std::string> said_;
};

struct Seams {
  /// The simulated host (a bundled name or a file), or nullopt for the real driver.
  std::optional<std::string> simulate;
  /// Where bundled simulated hosts are looked up by name, first match wins.
  std::vector<std::string> hosts_dirs;
  /// Folders searched for the fake libnvidia-ml.so.1 / libcuda.so.1, first match wins.
  std::vector<std::string> sim_lib_dirs;
  /// The program (and leading arguments) that answers a CUDA probe: it runs cuInit in a child
  /// process with the environment in question and prints serialize_probe()'s format.
  /// The CLI uses {its own binary, "__probe"}; the shared library its gpumap-probe helper.
  std::vector<std::string> probe_command;
  /// The lease folder (GPUMAP_LOCK_DIR); "" means the default.
  std::string lock_dir;
  /// The per-user cache folder for the driver's order; "" disables the cache.
  std::string cache_dir;
  /// Where a session puts what the run should say once (RunNotices), shared by every copy of
  /// these seams (watch frames, top's reader); null: nobody says them (a library user, whose
  /// `doctor`-style findings still do).
  std::shared_ptr<RunNotices> notices;
  /// Where /proc and /sys are (tests point them at fixtures).
  std::string proc_root = "/proc";
  std::string sysfs_root = "/sys";
  /// The PID namespace NVML's PIDs belong to ("pid:[...]"), when known better than the default.
  std::optional<std::string> nvml_pid_ns;
  /// Whether this process runs in a container (detected, or forced for tests).
  bool in_container = false;
  /// in_container was forced (GPUMAP_IN_CONTAINER): it then holds for a simulated host too,
  /// which otherwise is bare metal whatever this machine is.
  bool in_container_forced = false;
  /// Print the time of each NVML call to stderr.
  bool trace = false;
  /// The folder of the default mapping snapshot file (`gpumap snapshot`); "" when there is none.
  std::string state_dir;
  /// gpumap-kubelet, the kubelet's pod-resources reader (a build option: it links gRPC): its path,
  /// "" when this gpumap has none.  Asked only when a GPU process runs in a Kubernetes pod.
  std::string kubelet_helper;
  /// The kubelet's pod-resources socket ($GPUMAP_KUBELET_SOCKET; microk8s and k0s put it elsewhere).
  std::string kubelet_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  /// The CDI spec folders gpumap-kubelet reads, colon-separated, lowest priority first
  /// ($GPUMAP_CDI_DIRS; the runtimes' defaults).
  std::string cdi_dirs = "/etc/cdi:/var/run/cdi";
  /// How long reading NVML may take before gpumap gives up ($GPUMAP_DRIVER_TIMEOUT; 0: no limit).
  double driver_timeout_s = 60;
};

}  // namespace gpumap
