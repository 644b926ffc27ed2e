// The allowed set: the GPUs the layers above CUDA let this process use.  A container's
// NVIDIA_VISIBLE_DEVICES and a device cgroup already shape the snapshot (NVML inside shows only
// what may be opened); a Slurm step or job without a device cgroup restricts nothing by itself, so
// its allocation (SLURM_STEP_GPUS, else SLURM_JOB_GPUS: Slurm's node-global ids) is read here, once,
// and every action (pick, run, bind, pin, which) and every rule that writes a fix keeps to it.
// Pure: a snapshot and the launcher variables in, the allocation out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/launcher.h"
#include "model/snapshot.h"

namespace gpumap {

/// How Slurm's global ids were placed on this process's GPUs.
enum class SlurmIdReading {
  kNone,       // no usable SLURM_STEP_GPUS / SLURM_JOB_GPUS: no scheduler allocation
  kPositions,  // this process sees the whole node: id k is the k-th GPU by minor number (gres.conf
               // `File=/dev/nvidia[0-N]`), by nvidia-smi order where minors are unknown
  kMinors,     // some GPUs are hidden (a device cgroup or a container): id k is the GPU whose
               // /dev/nvidiaN has N = k
  kCgroup,     // the ids cannot be placed, and there are no more GPUs here than ids: a device
               // cgroup holds the allocation, so every GPU seen is allocated
  kUnknown,    // the ids cannot be placed and more GPUs are seen than allocated: which ones are the
               // allocation cannot be told (a gres.conf in another order); nothing is restricted
};

struct Allocation {
  std::string variable;            // "SLURM_STEP_GPUS" or "SLURM_JOB_GPUS"; "" with kNone
  std::vector<uint32_t> ids;       // as written
  SlurmIdReading reading = SlurmIdReading::kNone;
  /// Per id, in the ids' order: the UUID of the GPU it names here ("" when it names none here).
  std::vector<std::string> id_uuids;
  /// The GPUs this process may use, nvidia-smi order (every GPU of the snapshot when nothing restricts).
  std::vector<std::string> uuids;
  /// Some GPU of the snapshot is outside the allocation (kPositions / kMinors with fewer ids than GPUs).
  bool restricts = false;
  /// Some of the node's GPUs are not seen here at all (minor numbers with gaps: a device cgroup or a
  /// container left this process only some of them), Slurm or not.
  bool node_gpus_hidden = false;

  /// A GPU, or a MIG device of a GPU, this process may use.  Unknown UUIDs are not allowed.
  bool allows(const Snapshot& s, const std::string& uuid) const;
  /// "SLURM_STEP_GPUS=2,3" (the variable as read; "" with kNone).
  std::string setting() const;
  /// `setting()` with the GPUs it gives here: "SLURM_STEP_GPUS=2,3 (nvidia-smi GPUs 2, 3 here)".
  std::string words(const Snapshot& s) const;
  /// The Slurm global id of a GPU here, when the ids place it (kPositions / kMinors).
  std::optional<uint32_t> slurm_id_of(const std::string& uuid) const;
  /// The GPU a Slurm global id names here ("" when none: an id outside this process's GPUs).
  std::string uuid_of_slurm_id(uint32_t id) const;
};

/// Reads the allocation from the step's ids (SLURM_STEP_GPUS), else the job's.  Without Slurm ids
/// (or with ids that do not parse) every GPU of the snapshot is allowed.
Allocation read_allocation(const Snapshot& s, const LauncherEnv& launch);

/// The UUIDs among `uuids` the allocation allows, in their order.
std::vector<std::string> allowed_only(const Snapshot& s, const Allocation& a, const std::vector<std::string>& uuids);

}  // namespace gpumap
