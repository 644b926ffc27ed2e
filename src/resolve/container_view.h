// What a container started with NVIDIA_VISIBLE_DEVICES sees (the NVIDIA container toolkit,
// documented in reference/cuda-env-semantics.md §5): only the injected GPUs exist, numbered from
// 0 by NVML, nvidia-smi and CUDA in the host's (PCI) order; UUIDs and PCI bus ids stay the host's.
// Pure: a host snapshot and the variable in, the in-container snapshot out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

/// Inside a container (`inside`: the GPUs it sees, numbered from 0): each one's nvidia-smi index on
/// the host, in the order of `inside.gpus`, when NVIDIA_VISIBLE_DEVICES names whole GPUs by host
/// index and as many as are here (the runtime injects them in the host's order and numbers them
/// from 0: `2,3` makes host GPU 3 the container's GPU 1); empty when that cannot be told (UUIDs,
/// MIG devices, `all`, a count that does not match).
std::vector<uint32_t> host_indices(const Snapshot& inside, const std::optional<std::string>& nvidia_visible_devices);

}  // namespace gpumap
