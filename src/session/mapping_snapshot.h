// Mapping snapshots (docs/snapshot.md): record this host's GPU numbering to a file, and compare
// the host now with a recorded one.
#pragma once
#include <string>

#include "answer/snapshot_answer.h"
#include "session/session.h"

namespace gpumap {

/// The default snapshot file: Seams::state_dir/snapshot.json; a simulated host gets its own
/// (snapshot-simulated-NAME.json), so trying gpumap out never replaces the real host's.
/// Error(kExitUsage) when there is no state folder.
std::string default_snapshot_path(const Session& s);

/// This host's mapping now: NVML's numbering, CUDA's base order under each CUDA_DEVICE_ORDER as
/// gpumap knows it (from NVML where exact, else the driver or this boot's cache; an error in
/// place of an order CUDA cannot give), host name, boot id and the time.
MappingSnapshot take_mapping_snapshot(Session& s);

/// Records the mapping to `path` atomically and returns it.  Never replaces a file that is not a
/// gpumap snapshot (Error kExitUsage, as for a folder); with `create_folder` makes the missing
/// folders; a failed write is Error(kExitError) and leaves the old file as it was.
MappingSnapshot save_mapping_snapshot(Session& s, const std::string& path, bool create_folder);

/// The snapshot at `path`.  Error(kExitUsage) when it is missing (the hint names `save_command`),
/// unreadable, too big, damaged, not a snapshot or from a newer gpumap.
MappingSnapshot load_mapping_snapshot(const std::string& path, const std::string& save_command);

/// Compares the host now with the snapshot at `path` (errors as load_mapping_snapshot);
/// `save_command` is how the front end records a new one (the answer's advice).
SnapshotCheck check_mapping_snapshot(Session& s, const std::string& path, const std::string& save_command);

}  // namespace gpumap
