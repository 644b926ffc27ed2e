// `gpumap list`'s answer: the NVML inventory with what only gpumap adds to each GPU (its lease,
// its number outside a container or Slurm step, its cuda:N here).  session/list.h answer_list
// computes it; output/list_view.h writes its table, JSON and nvidia-smi CSV.
#pragma once
#include <map>
#include <string>

#include "model/lease.h"
#include "model/snapshot.h"
#include "resolve/gpu_selector.h"

namespace gpumap {

struct ListAnswer {
  const Snapshot* snapshot = nullptr;        // the session's (valid while it lives)
  std::map<std::string, LeaseState> leases;  // gpumap run's lease of each GPU, by UUID
  GpuPlace where;                            // outer numbers (a container's host indices, Slurm ids)
  /// Each GPU's cuda:N in the session's environment (a MIG GPU: its first MIG device's), by UUID;
  /// filled only when asked (ListRequest::cuda_ordinals): it needs CUDA's view.
  std::map<std::string, int> cuda_ordinal;
};

}  // namespace gpumap
