// What the binary was built from: the git commit, filled in at build time by
// cmake/gpumap_version.cmake ("unknown" when built outside a git checkout).
#pragma once

namespace gpumap {

const char* build_commit();       // full hash, "-dirty" appended for uncommitted changes; or "unknown"
const char* build_commit_date();  // YYYY-MM-DD of that commit, or ""

}  // namespace gpumap
