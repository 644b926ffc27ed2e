// which: what to set so that exactly these physical GPUs are cuda:0, cuda:1, ... in the order
// given, and where each of them is in the current environment (`gpumap which`).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "resolve/gpu_selector.h"
#include "resolve/launch_env.h"
#include "session/session.h"

namespace gpumap {

/// What CUDA shows for these GPUs, in order: a GPU in MIG mode shows its MIG devices in its place.
std::vector<std::string> cuda_targets(const Snapshot& s, const std::vector<std::string>& uuids);

struct WhichAnswer {
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

/// Where the session's GPUs are, for lists and messages: inside a container each one's host
/// number, in a Slurm step whose device cgroup leaves only its GPUs each one's Slurm global id.
GpuPlace gpu_place(Session& session, const Environment& env);

/// Answers `gpumap which SPEC...` for `env`: specs are nvidia-smi indices, UUIDs or unique
/// prefixes, MIG device UUIDs, PCI bus ids, or cuda:N.  Error(kExitUsage) for no spec, a spec
/// that names no GPU or several, or a GPU named twice; Error(kExitUnavailable) naming the
/// allocation for a GPU outside the Slurm step's (or job's) GPUs: advice to use it would put the
/// program on another job's GPU.
WhichAnswer which_gpus(Session& session, const Environment& env, const std::vector<std::string>& specs);

}  // namespace gpumap
