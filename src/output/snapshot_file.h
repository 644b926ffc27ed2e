// The mapping snapshot file format (docs/snapshot.md): versioned JSON, and the JSON of a diff.
// Pure text <-> values; reading and writing the file is os/state_file.h.
#pragma once
#include <string>

#include "output/render.h"
#include "resolve/snapshot_diff.h"

namespace gpumap {

/// The "format" marker of every snapshot file, and the newest version this gpumap writes and reads.
inline constexpr const char* kSnapshotFormat = "gpumap-snapshot";
inline constexpr int kSnapshotVersion = 1;

Json mapping_snapshot_json(const MappingSnapshot& s);

/// Parses a snapshot file's text.  Throws Error(kExitUsage) naming `path` and what is wrong: not
/// JSON, not a gpumap snapshot, written by a newer gpumap, a field missing or of the wrong type.
MappingSnapshot parse_mapping_snapshot(const std::string& text, const std::string& path);

/// True when `text` is a gpumap snapshot of any version (so saving may replace it).
bool looks_like_mapping_snapshot(const std::string& text);

/// `snapshot diff --json` and `verify --snapshot --json`.
Json snapshot_diff_json(const std::string& path, const MappingSnapshot& saved, const MappingSnapshot& now,
                        const SnapshotDiff& d);

}  // namespace gpumap
