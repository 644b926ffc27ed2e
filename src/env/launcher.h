// What launchers and schedulers put in the environment: Slurm, torchrun, MPI.
// Pure: no I/O.  A local rank is a process number, not a GPU number.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

/// Every variable a launcher sets to a process's local rank, innermost launcher first: torchrun,
/// Open MPI, MPICH's Hydra and Intel MPI (MPI_LOCALRANKID, PMI_LOCAL_RANK), MVAPICH2, Slurm.  The one
/// list: `bind`, `explain`, the findings, the C API's gpumap_local_device and the Python package's
/// local_device() all read it (docs/launch.md).
inline constexpr const char* kLocalRankVariables[] = {
    "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK",
    "SLURM_LOCALID"};
/// Every variable a launcher sets to a process's global rank, innermost first: torchrun, Open MPI,
/// PMIx (Open MPI 5, srun --mpi=pmix), MVAPICH2, MPICH/Intel MPI and srun --mpi=pmi2, Slurm.
inline constexpr const char* kGlobalRankVariables[] = {"RANK",      "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                                       "MV2_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};

/// "LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, ... or SLURM_LOCALID": the list in words, for messages.
std::string local_rank_variables_words(const char* last_joiner = "or");

struct LauncherEnv {
  std::vector<LocalRank> local_ranks;  // every local-rank variable that is set, innermost launcher first
  std::optional<uint32_t> local_world_size;  // LOCAL_WORLD_SIZE
  std::optional<uint32_t> world_size;        // WORLD_SIZE (torchrun)
  std::optional<std::string> master_addr;    // MASTER_ADDR (torchrun, torch.distributed.launch)
  /// The global rank: the first of kGlobalRankVariables that is set, as written, and its variable.
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

  /// The innermost launcher's local rank: the first that parsed in kLocalRankVariables' order;
  /// nullptr when none did.
  const LocalRank* rank() const;

  /// How many ranks run on this node, and in words where that came from: LOCAL_WORLD_SIZE; else,
  /// when MASTER_ADDR is a loopback address (one node: torch.distributed.launch, which sets no
  /// LOCAL_WORLD_SIZE in every release, started on one machine), WORLD_SIZE.  nullopt: unknown.
  std::optional<std::pair<uint32_t, std::string>> ranks_on_node() const;
};

/// 127.0.0.0/8, ::1 or localhost: the address a single-node launch gives MASTER_ADDR.
bool is_loopback_address(const std::string& addr);

/// Which cuda:N a process of a launcher should use when nothing narrowed its GPUs for it: the
/// rule of `gpumap.local_device()` and gpumap_local_device (C API), and of `explain`'s line.
struct LocalDevice {
  std::optional<uint32_t> cuda_ordinal;  // set: use cuda:N
  std::optional<LocalRank> rank;         // the local rank that decided (the first variable set)
  std::string why;                       // why this ordinal, in words
  /// Why there is none: an exit code (model/error.h: kExitUsage for a rank that is not a number,
  /// kExitUnavailable for too few GPUs), the words and the fix; code 0 when cuda_ordinal is set.
  int code = 0;
  std::string message, hint;
};

/// The rule, on values: `visible` GPUs this process sees (CUDA's own count once it runs), `cvd`
/// CUDA_VISIBLE_DEVICES as set (for the message when none is visible).  cuda:0 when gpumap bind
/// narrowed the rank (GPUMAP_BOUND), with one visible GPU, under Slurm's per-task binding (fewer
/// visible than SLURM_GPUS_ON_NODE) and with no local-rank variable; else cuda:<local rank> of the
/// first variable set.  Refused: no GPU, a rank that is not a number, a rank past the visible GPUs.
LocalDevice choose_local_device(const LauncherEnv& launch, size_t visible, const std::optional<std::string>& cvd);

/// Reads "2,3" or Slurm's ranges "0-2,5"; an error names the bad part.
IntList parse_int_list(const std::string& value);

LauncherEnv parse_launcher_env(const Environment& env);

}  // namespace gpumap
