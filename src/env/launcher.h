// What launchers and schedulers put in the environment: Slurm, torchrun, MPI.
// Pure: no I/O.  A local rank is a process number, not a GPU number.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/environment.h"

namespace gpumap {

struct IntList {
  std::vector<uint32_t> values;
  std::string error;  // non-empty when the variable is set but not a list of integers
};

struct LocalRank {
  std::string variable;  // which variable gave it ("SLURM_LOCALID", ...)
  std::optional<uint32_t> value;
  std::string error;  // set but not a non-negative integer
};

struct LauncherEnv {
  std::vector<LocalRank> local_ranks;  // every local-rank variable that is set, innermost launcher first
  std::optional<uint32_t> local_world_size;  // LOCAL_WORLD_SIZE
  /// The global rank, innermost launcher first: RANK (torchrun), OMPI_COMM_WORLD_RANK, PMIX_RANK,
  /// MV2_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID; the first that is set, as written, and its variable.
  std::optional<std::string> global_rank;
  std::string global_rank_variable;
  std::optional<IntList> slurm_step_gpus;    // global ids
  std::optional<IntList> slurm_job_gpus;     // global ids
  std::optional<std::string> gpu_device_ordinal;
  std::optional<uint32_t> slurm_gpus_on_node;
  bool in_slurm_step = false;  // SLURM_STEP_ID or SLURM_JOB_ID set
  /// `gpumap bind` set this environment's CUDA_VISIBLE_DEVICES: GPUMAP_BOUND, which bind exports, still
  /// equals it, so the rank's own GPUs are cuda:0, cuda:1, ... whatever its local rank.
  bool bound = false;
  /// bound and GPUMAP_BOUND_OWN set (`bind --keep-visible`): the rank's own GPUs are the first
  /// `bound_own` of those it sees; the rest are the other ranks' GPUs, kept visible for CUDA IPC and
  /// peer access.  nullopt: every GPU it sees is its own (plain bind), or not bound.
  std::optional<uint32_t> bound_own;

  /// The innermost launcher's local rank: the first that parsed in the order LOCAL_RANK,
  /// OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, PMI_LOCAL_RANK, SLURM_LOCALID;
  /// nullptr when none did.
  const LocalRank* rank() const;
};

/// Reads "2,3" or Slurm's ranges "0-2,5"; an error names the bad part.
IntList parse_int_list(const std::string& value);

LauncherEnv parse_launcher_env(const Environment& env);

}  // namespace gpumap
