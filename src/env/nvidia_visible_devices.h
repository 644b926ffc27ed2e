// NVIDIA_VISIBLE_DEVICES with the NVIDIA container toolkit's meaning (documented,
// libnvidia-container; not read by CUDA or NVML on a bare host).  Pure: no I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

enum class NvdMode {
  kUnset,  // no GPUs and no driver (legacy CUDA images treat it as all)
  kVoid,   // "void" or empty: no GPUs, no driver
  kNone,   // "none": no GPUs, driver libraries still mounted
  kAll,    // "all"
  kList,   // a list of devices
};

enum class NvdEntryKind { kIndex, kUuid, kMigUuid, kPciAddress, kMigIndex, kInvalid };

struct NvdEntry {
  std::string raw;
  NvdEntryKind kind = NvdEntryKind::kInvalid;
  uint32_t index = 0;      // kIndex: NVML (host) index; kMigIndex: GPU index
  uint32_t mig_index = 0;  // kMigIndex: the MIG device index on that GPU
  std::string reason;      // kInvalid: why
};

struct NvidiaVisibleDevices {
  NvdMode mode = NvdMode::kUnset;
  std::vector<NvdEntry> entries;
};

NvidiaVisibleDevices parse_nvidia_visible_devices(const std::optional<std::string>& value);

}  // namespace gpumap
