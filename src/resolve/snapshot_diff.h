// Mapping snapshots (`gpumap snapshot save|diff`, `verify --snapshot`): the numbering of a
// host's GPUs recorded as plain values (MappingSnapshot, model/snapshot.h), and what changed
// between two such records, in words.  Pure: no driver, no files (the file format is
// formats/snapshot_file.h, the file itself os/state_file.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace gpumap {

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
