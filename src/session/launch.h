// Starting a program on chosen GPUs, as operations: what `gpumap run`, `gpumap bind` and the
// library's pin share.  Each front end parses its own arguments into a request, calls one of
// these, and renders the plain result; none builds a child's environment itself.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"
#include "env/launcher.h"
#include "os/launch.h"
#include "resolve/launch_env.h"
#include "session/lease_gpus.h"
#include "session/session.h"

namespace gpumap {

/// How the program is to be started.
struct LaunchRequest {
  CvdForm form = CvdForm::kIndex;  // how CUDA_VISIBLE_DEVICES names the GPUs
  bool bind_cpus = true;           // restrict CPU affinity to the GPUs' local CPUs
  bool mark_bound = false;         // also set GPUMAP_BOUND (bind: the narrowing is deliberate)
  size_t cpu_gpus = SIZE_MAX;      // the CPUs near the first this many GPUs only (bind --keep-visible: its own)
  std::string cpus_not_asked = "not asked";  // LaunchPlan::cpus_not_bound without bind_cpus (a front end names its option)
};

/// A program about to start on `uuids` (cuda:0 first).
struct LaunchPlan {
  std::vector<std::string> uuids;
  LaunchVisibility visibility;
  /// Every variable set for the program, in the order to print them (CUDA_DEVICE_ORDER first).
  std::vector<std::pair<std::string, std::string>> exports;
  Environment env;        // the program's whole environment: the session's with `exports` applied
  std::vector<int> cpus;  // sorted; empty: the inherited affinity is kept
  /// Why `cpus` is empty ("" when CPUs are bound; the request's cpus_not_asked when it said not to).
  std::string cpus_not_bound;
};

/// The plan for `uuids` in this session's environment.  The inherited CPU set is read through
/// os/launch.h (current_affinity) only when CPUs are to be bound.
LaunchPlan plan_launch(Session& session, const std::vector<std::string>& uuids, const LaunchRequest& request);

/// "0-7" for bound CPUs, else "not bound (<why>)", as `run` and `bind` print it.
std::string cpu_summary(const LaunchPlan& plan);

/// One rank of a launcher: which local rank it is, and the plan for its GPUs.
struct RankBinding {
  LocalRank rank;                   // the innermost launcher's (value always set)
  std::vector<std::string> own;     // its own GPUs: cuda:0 .. cuda:own.size()-1 of the plan
  std::vector<std::string> notes;   // other launchers' ranks that disagree, GPUs outside the allocation, in words
  std::vector<std::string> warnings;  // its own GPU busy with another program where no scheduler chose them
  std::string advice;               // how the rank's program must name its GPU (cuda:0), in words
  LaunchPlan plan;
};

/// Rank r of the innermost launcher in the session's environment gets cuda:[r*N, r*N+N) of the
/// GPUs the job sees; with keep_visible it sees all of them, rotated so its own come first
/// (resolve: bind_rank), GPUMAP_BOUND_OWN saying how many, and CPUs near its own.  Error(kExitUsage) when no launcher set a local rank (gpumap never assumes
/// rank 0) or its value is not one; Error(kExitUnavailable) when CUDA would fail or the job sees
/// too few GPUs.  Reads the snapshot with topology (for the CPUs), without processes.
RankBinding plan_bind(Session& session, size_t gpus_per_rank, bool keep_visible, const LaunchRequest& request);

/// Starts the plan's `argv` as a child in a process group of its own holding `held`'s leases
/// (which then name the job's group), forwards signals to it and waits: os/launch.h's
/// launch_and_wait.
LaunchResult run_leased(const LaunchPlan& plan, const std::vector<std::string>& argv, LeasedGpus& held);

/// Replaces this process with `argv` under the plan (no lease: the launcher owns the allocation).
[[noreturn]] void exec_plan(const LaunchPlan& plan, const std::vector<std::string>& argv);

}  // namespace gpumap
