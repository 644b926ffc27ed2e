// cuda:N against the numbers a user reads elsewhere (nvidia-smi's index; inside a container the
// host's, in a Slurm step under a device cgroup Slurm's global id): the one line `doctor` and the
// library's diagnose() print when the two numberings are not the same.  Pure.
#pragma once
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "resolve/gpu_selector.h"

namespace gpumap {

/// At most this many cuda:N are named in the line; the rest are counted.
inline constexpr size_t kRenumberingNamed = 8;

/// "cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5" for the CUDA devices `uuids` (cuda:0 first), with
/// each GPU's outer number where `where` knows one ("cuda:0 = nvidia-smi GPU 0 (host GPU 2)"); a MIG
/// device as "GPU 0 MIG device 1".  Longer lists name the first kRenumberingNamed and count the rest
/// ("..., and 10 more: gpumap map lists them").  "" when the numbering is the identity: every
/// cuda:N is the whole GPU that nvidia-smi (and the outer layer, where there is one) numbers N, or
/// when no device is visible.
std::string renumbering_line(const Snapshot& s, const std::vector<std::string>& uuids, const GpuPlace& where = {});

}  // namespace gpumap
