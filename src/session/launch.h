// Starting a program on chosen GPUs, as operations: what `gpumap run`, `gpumap bind` and the
// library's pin share.  Each front end parses its own arguments into a request, calls one of
// these, and renders the plain result; none builds a child's environment itself.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "answer/launch_answer.h"  // LaunchPlan, RankBinding, LaunchAnswer, BindAnswer
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

/// The plan for `uuids` in this session's environment.  The inherited CPU set is read through
/// os/launch.h (current_affinity) only when CPUs are to be bound.
LaunchPlan plan_launch(Session& session, const std::vector<std::string>& uuids, const LaunchRequest& request);

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

/// `gpumap run` before the command starts: leases GPUs as lease_gpus does (`options.argv`: the
/// command) into `held`, and plans the launch on them.  Same errors as lease_gpus.
LaunchAnswer start_run(Session& session, const PickRequest& pick, const LeaseOptions& options, const LaunchRequest& request,
                       LeasedGpus& held);

/// `gpumap bind` before the rank's program starts: plan_bind, with the snapshot and `argv`.
BindAnswer start_bind(Session& session, size_t gpus_per_rank, bool keep_visible, const LaunchRequest& request,
                      const std::vector<std::string>& argv);

}  // namespace gpumap
