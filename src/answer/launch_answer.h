// What `gpumap run` and `gpumap bind` set up before the command starts (session/launch.h plans it;
// output/launch_view.h writes it on stderr and to --json-file).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"
#include "env/launcher.h"
#include "model/lease.h"
#include "model/snapshot.h"
#include "resolve/launch_env.h"

namespace gpumap {

/// A program about to start on `uuids` (cuda:0 first).
struct LaunchPlan {
  std::vector<std::string> uuids;
  LaunchVisibility visibility;
  /// Every variable set for the program, in the order to print them (CUDA_DEVICE_ORDER first).
  std::vector<std::pair<std::string, std::string>> exports;
  Environment env;        // the program's whole environment: the session's with `exports` applied
  std::vector<int> cpus;  // sorted; empty: the inherited affinity is kept
  std::string cpu_list;   // `cpus` as taskset writes them ("0-7,16"); "" when empty
  /// Why `cpus` is empty ("" when CPUs are bound; the request's cpus_not_asked when it said not to).
  std::string cpus_not_bound;
};

/// One rank of a launcher: which local rank it is, and the plan for its GPUs.
struct RankBinding {
  LocalRank rank;                   // the innermost launcher's (value always set)
  std::vector<std::string> own;     // its own GPUs: cuda:0 .. cuda:own.size()-1 of the plan
  std::vector<std::string> notes;   // other launchers' ranks that disagree, GPUs outside the allocation, in words
  std::vector<std::string> warnings;  // its own GPU busy with another program where no scheduler chose them
  std::string advice;               // how the rank's program must name its GPU (cuda:0), in words
  LaunchPlan plan;
};

/// `gpumap run`: the GPUs leased and the plan for the command.
struct LaunchAnswer {
  const Snapshot* snapshot = nullptr;  // the session's (valid while it lives)
  LaunchPlan plan;
  std::vector<std::string> argv;
  LeaseRecord lease;                   // what the lock files say
  std::string lease_dir;
};

/// `gpumap bind`: the rank, its GPUs and the plan for its program.
struct BindAnswer {
  const Snapshot* snapshot = nullptr;
  RankBinding binding;
  std::vector<std::string> argv;
};

}  // namespace gpumap
