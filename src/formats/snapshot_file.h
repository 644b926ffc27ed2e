// The mapping snapshot file format (docs/snapshot.md): versioned JSON <-> MappingSnapshot.
// Pure text <-> values; reading and writing the file is os/state_file.h, what changed between
// two snapshots resolve/snapshot_diff.h, the diff's command output output/snapshot_view.h.
#pragma once
#include <string>

#include "formats/json.h"
#include "model/snapshot.h"

namespace gpumap {

/// The "format" marker of every snapshot file, and the newest version this gpumap writes and reads.
inline constexpr const char* kSnapshotFormat = "gpumap-snapshot";
inline constexpr int kSnapshotVersion = 1;

/// The file's content (written as dump() of it); also the "snapshot" of `snapshot save --json`.
Json mapping_snapshot_json(const MappingSnapshot& s);

/// Parses a snapshot file's text.  Throws Error(kExitUsage) naming `path` and what is wrong: not
/// JSON, not a gpumap snapshot, written by a newer gpumap, a field missing or of the wrong type.
MappingSnapshot parse_mapping_snapshot(const std::string& text, const std::string& path);

/// True when `text` is a gpumap snapshot of any version (so saving may replace it).
bool looks_like_mapping_snapshot(const std::string& text);

}  // namespace gpumap
