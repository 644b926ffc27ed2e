// What a container started with NVIDIA_VISIBLE_DEVICES sees (the NVIDIA container toolkit,
// documented in reference/cuda-env-semantics.md §5): only the injected GPUs exist, numbered from
// 0 by NVML, nvidia-smi and CUDA in the host's (PCI) order; UUIDs and PCI bus ids stay the host's.
// Pure: a host snapshot and the variable in, the in-container snapshot out.
#pragma once
#include <string>

#include "env/nvidia_visible_devices.h"
#include "model/snapshot.h"

namespace gpumap {

struct ContainerView {
  Snapshot snapshot;  // the GPUs inside, renumbered; source says it is a prediction
  std::string what;   // in words: "GPUs 0, 2 of the host, renumbered from 0"
};

/// Throws Error(kExitUsage) for an entry the runtime would refuse (naming it and the host's GPUs):
/// the container would not start.
ContainerView container_view(const Snapshot& host, const std::string& nvidia_visible_devices);

}  // namespace gpumap
