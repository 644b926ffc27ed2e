// Mapping snapshots (`gpumap snapshot save|diff`, `verify --snapshot`): the numbering of a
// host's GPUs recorded as plain values, and what changed between two such records, in words.
// Pure: no driver, no files (the file format is output/snapshot_file.h, the file itself
// os/state_file.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace gpumap {

struct SnapshotMig {
  std::string uuid;  // "MIG-..."
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
};

struct SnapshotGpu {
  uint32_t nvml_index = 0;
  std::optional<uint32_t> minor_number;  // /dev/nvidiaN
  std::string uuid;
  std::string pci_bus_id;  // NVML form
  std::string name;
  std::optional<bool> mig_enabled;
  std::vector<SnapshotMig> mig_devices;
};

/// CUDA's base order (CUDA_VISIBLE_DEVICES unset) under one CUDA_DEVICE_ORDER value.
struct SnapshotOrder {
  std::string order;                 // "FASTEST_FIRST" | "PCI_BUS_ID"
  std::vector<std::string> devices;  // UUIDs (MIG devices in place of their GPU), cuda:0 first
  std::string source;                // how gpumap knew it: "predicted" | "cache" | "driver"
  std::string error;                 // non-empty: the order could not be obtained (devices empty)
};

struct MappingSnapshot {
  std::string gpumap_version;
  std::string saved_at;  // UTC, "2026-11-30T03:04:05Z"
  std::string hostname;
  std::string boot_id;
  bool simulated = false;
  std::string source;  // "NVML" | "simulated host FILE"
  std::optional<std::string> driver_version;
  std::optional<int> cuda_driver_version;  // 13000 = 13.0
  std::vector<SnapshotGpu> gpus;           // nvidia-smi order
  std::vector<SnapshotOrder> cuda_orders;  // FASTEST_FIRST, then PCI_BUS_ID
};

/// The mapping part of a driver snapshot (orders are added by the caller, who may ask the driver).
MappingSnapshot mapping_snapshot_of(const Snapshot& s);

struct SnapshotChange {
  std::string kind;     // gpu_replaced, gpu_moved, gpu_missing, gpu_added, minor_number_changed,
                        // mig_mode_changed, mig_devices_changed, driver_changed, cuda_version_changed,
                        // cuda_order_changed, cuda_order_unavailable
  std::string message;  // what changed, in words
  std::string breaks;   // what that breaks
  std::string uuid;     // the GPU concerned (the new board for gpu_replaced), "" for host-wide changes
  std::string before, after;  // the values compared, as text ("" when there was none)
};

struct SnapshotDiff {
  std::vector<SnapshotChange> changes;  // empty: the numbering is the same
  std::vector<std::string> notes;       // context that is no difference (a reboot, another host name)
};

/// What changed from `before` (the saved snapshot) to `now`.  A changed boot id or time alone is
/// no difference; GPUs are matched by UUID, then by PCI slot (a new UUID in an old slot is a
/// replaced board).
SnapshotDiff diff_mapping_snapshots(const MappingSnapshot& before, const MappingSnapshot& now);

/// "CUDA 13.0" style text for a cuDriverGetVersion number.
std::string cuda_version_text(const std::optional<int>& v);

}  // namespace gpumap
