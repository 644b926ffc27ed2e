// What `run`, `bind` (and a library user launching a program) decide before the program
// starts: which of the job's GPUs a rank gets, and the CPUs near the GPUs.  Pure: the
// inherited CPU set comes in as a value (os/launch.h's current_affinity in production).
#pragma once
#include <string>
#include <vector>

#include "env/launcher.h"
#include "model/snapshot.h"

namespace gpumap {

/// Rank r's GPUs: cuda:[r*per_rank, r*per_rank+per_rank) of `view` (the job's CUDA devices).
/// Error(kExitUnavailable) naming the rank and the count when the job sees too few.
std::vector<std::string> rank_slice(const std::vector<std::string>& view, const LocalRank& rank, size_t per_rank);

/// What `bind` gives one rank.
struct RankGpus {
  std::vector<std::string> own;      // its GPUs (rank_slice): cuda:0 .. cuda:own.size()-1 in the rank
  std::vector<std::string> visible;  // what its CUDA_VISIBLE_DEVICES names, in order: `own`, or with
                                     // keep_visible every GPU of the view, rotated so that `own` come first
};

/// Rank r's binding.  keep_visible (`bind --keep-visible`): rank r sees every GPU of `view`,
/// starting at its own (view[r*per_rank..], then view[..r*per_rank]), so cuda:0 is still its GPU
/// and the other ranks' GPUs stay reachable for CUDA IPC and peer access.  Errors as rank_slice.
RankGpus bind_rank(const std::vector<std::string>& view, const LocalRank& rank, size_t per_rank, bool keep_visible);

struct CpuChoice {
  std::vector<int> cpus;  // sorted; empty: keep the inherited affinity
  std::string why_not;    // why `cpus` is empty
};

/// The CPUs local to `uuids` (GPUs or MIG devices: a MIG device's are its GPU's), within `inherited`.
CpuChoice cpus_for(const Snapshot& s, const std::vector<std::string>& uuids, const std::vector<int>& inherited);

}  // namespace gpumap
