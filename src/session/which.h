// which: what to set so that exactly these physical GPUs are cuda:0, cuda:1, ... in the order
// given, and where each of them is in the current environment (`gpumap which`).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "resolve/gpu_selector.h"
#include "resolve/launch_env.h"
#include "answer/which_answer.h"
#include "session/session.h"

namespace gpumap {

/// What CUDA shows for these GPUs, in order: a GPU in MIG mode shows its MIG devices in its place.
std::vector<std::string> cuda_targets(const Snapshot& s, const std::vector<std::string>& uuids);


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
