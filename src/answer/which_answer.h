// `gpumap which`'s answer: what to set so that exactly these physical GPUs are cuda:0, cuda:1, ...
// in the order given, and where each is now (session/which.h computes it; output/which_view.h
// writes it).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/mapping.h"
#include "model/snapshot.h"
#include "resolve/gpu_selector.h"
#include "resolve/launch_env.h"

namespace gpumap {

struct WhichAnswer {
  const Snapshot* snapshot = nullptr;         // the session's (valid while it lives)
  std::vector<CudaOrdinalAnswer> asked_cuda;  // the specs written cuda:N, answered in this environment
  std::vector<std::string> asked;             // the GPUs named, as NVML names them, in order
  std::vector<std::string> targets;           // cuda_targets(asked): what will be cuda:0, cuda:1, ...
  std::vector<std::optional<size_t>> pci_positions;  // per target: its index under PCI_BUS_ID order, if any
  LaunchVisibility by_uuid;                   // CUDA_VISIBLE_DEVICES=<UUIDs> (always possible)
  std::optional<LaunchVisibility> by_index;   // CUDA_DEVICE_ORDER=PCI_BUS_ID + indices, when indices can say it
  std::string no_index_reason;                // why by_index is absent, in words
  std::string docker_run;                     // `docker run --gpus ...` (without the image)
  std::vector<std::string> now;               // per asked GPU: "<who> (<uuid>, <bus>): cuda:1 in the current environment"
  Mapping mapping;                            // the current environment's
};

}  // namespace gpumap
