// The devices this environment gets, and where named GPUs are in it: what a program asks
// before it picks `cuda:N` or builds a device_map.
#pragma once
#include "answer/self_answer.h"  // VisibleDevice, LocatedGpu
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "session/session.h"

namespace gpumap {

// Whether the environment hides every GPU on purpose (so the device list is [] rather than an
// error) is model/cuda_view.h's gpus_hidden_on_purpose, the rules' reading too.

/// gpus_hidden_on_purpose for `env`'s CUDA_VISIBLE_DEVICES as parsed, without a snapshot: a
/// CPU-only process (CUDA_VISIBLE_DEVICES=-1) on a machine without an NVIDIA driver gets an
/// empty device list, not "no driver".  A value CUDA ignores as too long hides nothing.
bool environment_hides_every_gpu(const Environment& env);

/// The mapping's visible devices, in CUDA order (empty when CUDA would fail to initialise).
std::vector<VisibleDevice> visible_devices(const Snapshot& s, const Mapping& m);

/// Each spec (nvidia-smi index, UUID or prefix, MIG UUID, PCI bus id) and its cuda ordinal in
/// `m`.  Error(kExitUsage) for a spec that names no GPU or several.
std::vector<LocatedGpu> locate_gpus(const Snapshot& s, const Mapping& m, const std::vector<std::string>& specs);

}  // namespace gpumap
