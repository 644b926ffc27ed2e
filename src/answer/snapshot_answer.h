// What `gpumap snapshot save` and `snapshot diff` (and `verify --snapshot`) tell every front end:
// session/mapping_snapshot.h fills these, output/snapshot_view.h writes them.
#pragma once
#include <string>

#include "model/snapshot.h"
#include "resolve/snapshot_diff.h"

namespace gpumap {

/// save: the mapping recorded and where.
struct SnapshotSaved {
  MappingSnapshot snapshot;
  std::string path;
  std::string diff_command;  // how to compare with it later, in the front end's words
};

/// diff: the snapshot at `path` against the host now.
struct SnapshotCheck {
  std::string path;
  std::string save_command;  // how to record a new one, in the front end's words
  MappingSnapshot saved, now;
  SnapshotDiff diff;
  int code = 0;  // kExitOk (same numbering) or kExitMismatch
};

}  // namespace gpumap
