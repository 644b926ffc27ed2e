// The session: one driver, one environment to reason about, the seams, and the host snapshot
// read on first use.  Every operation of the library takes one; the CLI's Context holds
// one beside the output mode.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "driver/driver_source.h"
#include "driver/nvml_reader.h"
#include "env/environment.h"
#include "model/finding.h"
#include "model/seams.h"
#include "model/snapshot.h"
#include "resolve/allocation.h"
#include "resolve/resolve_mapping.h"

namespace gpumap {

class Session {
 public:
  Session(DriverSource driver, Environment env, Seams seams)
      : driver_(std::move(driver)), env_(std::move(env)), seams_(std::move(seams)) {}

  const DriverSource& driver() const { return driver_; }
  const Environment& env() const { return env_; }
  Environment& env() { return env_; }
  const Seams& seams() const { return seams_; }
  /// The snapshot, read with `opt` on first use (later calls return the same one).
  const Snapshot& snapshot(const ReadOptions& opt = {});
  /// A fresh snapshot (memory, load and processes change), which later snapshot() calls return.
  const Snapshot& reread(const ReadOptions& opt);
  /// The mapping for `env`, predicted unless probe (the driver's base order is cached per boot).
  /// With fresh_order the cache is not read: the driver is asked for its order again and the
  /// cache rewritten (map --check, when a cached order disagreed with the driver).
  Mapping mapping(const Environment& env, bool probe, bool fresh_order = false);
  /// The mapping of `env` inside a container that has only `inside`'s GPUs (resolve/container_view.h's
  /// snapshot of this host): predicted, the driver's order kept for those (cache or one probe).
  Mapping mapping_in(const Snapshot& inside, const Environment& env);
  Mapping mapping(bool probe = false) { return mapping(env_, probe); }
  /// The allowed set for `env` (resolve/allocation.h): the GPUs of snapshot() that the Slurm step or
  /// job lets the process use (every GPU when no scheduler allocation restricts it; a container or a
  /// device cgroup has already left only its own GPUs in the snapshot).  Every action (pick, run,
  /// bind, pin, which) keeps to it.
  Allocation allocation(const Environment& env) { return read_allocation(snapshot(), parse_launcher_env(env)); }
  Allocation allocation() { return allocation(env_); }
  /// A DriverAsk bound to this session's driver.
  DriverAsk driver_ask() const;
  /// The lease folder (Seams::lock_dir, or the default).
  std::string lease_dir() const;
  /// Whether the process reasoned about runs in a container: this machine's marks (never for a
  /// simulated host, which is bare metal), or a container what-if.
  bool in_container() const;
  /// Predicts what a container started with NVIDIA_VISIBLE_DEVICES=`value` on this host sees:
  /// from then on snapshot() is the container's (only the injected GPUs, renumbered from 0,
  /// host UUIDs kept) and mapping() keeps only those of the driver's devices; probe is refused
  /// (this driver sees the host).  Error(kExitUsage) for an entry the runtime would refuse.
  void enter_container(const std::string& value);

 private:
  /// The mapping engine's order cache and boot id (what mapping() and mapping_in() share).
  MappingOptions mapping_options(bool fresh_order) const;
  DriverSource driver_;
  Environment env_;
  Seams seams_;
  std::unique_ptr<Snapshot> snapshot_;
  bool container_what_if_ = false;
};

/// The line the run says once (Seams::notices) when the order cache folder `dir` cannot serve:
/// the problem (os/order_cache.h's cache_dir_problem), what it costs and the fix.
std::string cache_notice(const std::string& dir, const std::string& problem);

/// `doctor`'s finding `cache-unusable` when the session's cache folder cannot serve (the fix in
/// its note: a command on a folder, not a variable the combined fix could set); the run's notice
/// for the same folder is then not said again.
std::optional<Finding> cache_finding(const Session& s);

/// The boot id a simulated host's order cache is keyed on: its file's path and a hash of its
/// content (an edited file is another machine).
std::string simulated_boot_id(const std::string& host_file);

/// select_driver, and for a simulated host its file checked up front, so a bad file gets a
/// clear message (Error(kExitUsage) naming the file and the field) before any command runs.
DriverSource select_checked_driver(const Seams& seams);

/// The seams the CLI takes from its environment: GPUMAP_SIMULATE (unless `simulate` is given),
/// GPUMAP_HOSTS_DIR, GPUMAP_SIM_LIBDIR, GPUMAP_LOCK_DIR, the cache folder ($GPUMAP_CACHE_DIR,
/// else $XDG_CACHE_HOME/gpumap, else $HOME/.cache/gpumap), GPUMAP_PROC_ROOT, GPUMAP_SYSFS_ROOT,
/// GPUMAP_NVML_PID_NS, GPUMAP_TRACE, and whether this is a container (GPUMAP_IN_CONTAINER=1/0
/// forces it; else the container files or $container), with bundled hosts and fake driver
/// libraries looked up next to `install_dir` (the folder of the binary or library) and in
/// its ../share/gpumap/hosts and ../lib/gpumap/sim, and the state folder (state_dir_from).
/// The probe command is left to the caller.
Seams seams_from_environment(const Environment& env, const std::string& install_dir,
                             const std::optional<std::string>& simulate = std::nullopt);

/// seams_from_environment for a program that is its own probe child: data files next to this
/// executable, and the probe command this executable with `probe_argument` ("__probe").
Seams program_seams(const Environment& env, const std::optional<std::string>& simulate, const std::string& probe_argument);

/// Seconds for Seams::driver_timeout_s from text ("5", "0.5"; 0: no limit).  Error(kExitUsage)
/// naming `name` (e.g. "GPUMAP_DRIVER_TIMEOUT=") for anything but a number from 0 to 86400.
double parse_driver_timeout(const std::string& text, const std::string& name);

/// The state folder: $GPUMAP_STATE_DIR; else /var/lib/gpumap for root; else $XDG_STATE_HOME/gpumap;
/// else $HOME/.local/state/gpumap; "" when none can be determined.
std::string state_dir_from(const Environment& env, bool as_root);

}  // namespace gpumap
