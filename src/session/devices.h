// The devices this environment gets, and where named GPUs are in it: what a program asks
// before it picks `cuda:N` or builds a device_map.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "session/session.h"

namespace gpumap {

/// One cuda:N with the GPU's identity (a MIG device: its parent GPU's index and PCI bus id, its
/// own name).  The JSON of a device is output/json_view.h's cuda_device_json, not this.
struct VisibleDevice {
  size_t cuda_ordinal = 0;                    // N in cuda:N
  std::optional<uint32_t> nvml_index;    // the nvidia-smi index (a MIG device's: its GPU's)
  std::string uuid;                      // "GPU-..." or "MIG-..."
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> name;
};

// Whether the environment hides every GPU on purpose (so the device list is [] rather than an
// error) is model/cuda_view.h's gpus_hidden_on_purpose, the rules' reading too.

/// gpus_hidden_on_purpose for `env`'s CUDA_VISIBLE_DEVICES as parsed, without a snapshot: a
/// CPU-only process (CUDA_VISIBLE_DEVICES=-1) on a machine without an NVIDIA driver gets an
/// empty device list, not "no driver".  A value CUDA ignores as too long hides nothing.
bool environment_hides_every_gpu(const Environment& env);

/// The mapping's visible devices, in CUDA order (empty when CUDA would fail to initialise).
std::vector<VisibleDevice> visible_devices(const Snapshot& s, const Mapping& m);

/// A GPU named physically, and where it is in this environment.
struct LocatedGpu {
  std::string spec;                    // as given
  std::string uuid;                    // what it names (GPU or MIG device)
  uint32_t nvml_index = 0;
  std::optional<size_t> cuda_ordinal;  // nullopt: not visible here
};

/// Each spec (nvidia-smi index, UUID or prefix, MIG UUID, PCI bus id) and its cuda ordinal in
/// `m`.  Error(kExitUsage) for a spec that names no GPU or several.
std::vector<LocatedGpu> locate_gpus(const Snapshot& s, const Mapping& m, const std::vector<std::string>& specs);

}  // namespace gpumap
