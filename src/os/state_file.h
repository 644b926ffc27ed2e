// Files gpumap keeps between runs (mapping snapshots): reading them, and writing them so that a
// failure never leaves a half-written file.  Where they live is Seams::state_dir.
#pragma once
#include <sys/types.h>

#include <string>

namespace gpumap {

struct FileText {
  int error = 0;         // errno of the failed open/read (ENOENT: no such file), 0 on success
  bool too_big = false;  // longer than the limit: not read
  std::string text;
};

/// Reads a whole regular file of at most `max_bytes`.  A folder reads as EISDIR.
FileText read_small_file(const std::string& path, size_t max_bytes);

/// Replaces `path` with `text` atomically: a temporary file in the same folder, written in full
/// and synced, then renamed over `path` (and the folder synced).  On any failure the temporary
/// file is removed, `path` is left as it was, and the error is returned in words ("" on success).
std::string write_file_atomically(const std::string& path, const std::string& text, mode_t mode);

/// mkdir -p: creates the missing folders of `dir` with `mode`.  "" or the error in words.
std::string make_dirs(const std::string& dir, mode_t mode);

}  // namespace gpumap
