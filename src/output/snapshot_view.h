// Mapping snapshots as command output: the JSON of a diff (the file format is
// formats/snapshot_file.h).
#pragma once
#include <string>

#include "formats/json.h"
#include "resolve/snapshot_diff.h"

namespace gpumap {

/// `snapshot diff --json` and `verify --snapshot --json`.
Json snapshot_diff_json(const std::string& path, const MappingSnapshot& saved, const MappingSnapshot& now,
                        const SnapshotDiff& d);

}  // namespace gpumap
