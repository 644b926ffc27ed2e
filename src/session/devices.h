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

/// True when the environment hides every GPU on purpose (CUDA_VISIBLE_DEVICES="" or starting with
/// a negative index, "-1": the CPU-only idiom), so CUDA's "no device" is the answer asked for:
/// the device list is empty, not an error.  A value that merely names nothing (a typo) is not.
bool hides_every_gpu(const CudaView& view);

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
