// Mapping snapshots as command output: the JSON of a diff (the file format is
// formats/snapshot_file.h).
#pragma once
#include <string>

#include "answer/snapshot_answer.h"
#include "formats/json.h"
#include "model/snapshot.h"

namespace gpumap {

/// `snapshot diff --json` and `verify --snapshot --json`.
Json snapshot_diff_json(const std::string& path, const MappingSnapshot& saved, const MappingSnapshot& now,
                        const SnapshotDiff& d);

/// `snapshot save --json`: {simulated, saved (the path), snapshot (the file's object)}.
Json snapshot_saved_json(const SnapshotSaved& a);
/// `snapshot save`: what was recorded, CUDA orders that could not be, and how to check it later.
std::string snapshot_saved_text(const SnapshotSaved& a);
/// `snapshot diff` (and `verify --snapshot`): SAME, or CHANGED with each difference and what it
/// breaks, the notes, and how to record the new numbering when it is intended.
std::string snapshot_check_text(const SnapshotCheck& c);

/// `snapshot save` in the form asked: the JSON document (--json) or the text.
std::string render_snapshot_saved(const SnapshotSaved& a, bool json);
/// `snapshot diff FILE` and `verify --snapshot FILE` in the form asked: the JSON document
/// (--json), or the host's banner (`host`: the host now) and the check's text.
std::string render_snapshot_check(const Snapshot& host, const std::string& path, const SnapshotCheck& c, bool json);

}  // namespace gpumap
