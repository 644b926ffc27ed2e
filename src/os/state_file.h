// Files gpumap reads and writes between runs (mapping snapshots, metrics textfiles, job-map files,
// the order cache): the one place that opens them, so every command that writes a file, often as
// root in a folder other users can reach, gets the same protections.
//  - Reading never opens anything but a regular file: the type is checked (lstat/stat) before the
//    open, the open is O_NONBLOCK (a FIFO swapped in between never blocks) and fstat confirms it.
//  - Writing is a temporary file created O_EXCL | O_NOFOLLOW in the folder (opened once and used by
//    descriptor, so the folder checked is the folder written), written in full and synced, then
//    renamed over the target.  An existing target that is not a regular file (device node, FIFO,
//    socket, symbolic link even dangling, folder) is refused, never replaced.
// Where the state files live is Seams::state_dir.
#pragma once
#include <sys/types.h>

#include <string>

namespace gpumap {

struct FileText {
  int error = 0;         // errno of the failed open/read (ENOENT: no such file; EISDIR: a folder), 0 on success
  bool too_big = false;  // longer than the limit: not read
  std::string not_regular;  // "a FIFO", "a character device", "a symbolic link"...: not opened (error is EINVAL)
  std::string text;
};

/// What kind of file a stat mode is, in words for a message: "a regular file", "a FIFO",
/// "a character device", "a block device", "a socket", "a symbolic link", "a folder".
std::string file_kind(mode_t mode);

/// Reads a whole regular file of at most `max_bytes`.  A folder reads as EISDIR; any other
/// non-regular file (FIFO, device, socket) is not opened: error EINVAL, `not_regular` says what it
/// is.  follow_symlink=false: a symbolic link is not followed either (not_regular "a symbolic link").
FileText read_small_file(const std::string& path, size_t max_bytes, bool follow_symlink = true);

/// Why `path` may not be replaced by write_file_atomically ("" when it is missing or a regular
/// file): "PATH is a FIFO, not a regular file: not replacing it".  lstat: a link is not followed.
std::string check_replaceable(const std::string& path);

/// Replaces `path` with `text` atomically: a temporary file in the same folder (O_EXCL |
/// O_NOFOLLOW, through a descriptor on the folder), written in full and synced, then renamed over
/// `path` (and the folder synced).  Refuses, writing nothing, when `path` exists and is not a
/// regular file (check_replaceable), or when the folder is writable by others and not sticky
/// (anyone could swap the file).  On any failure the temporary file is removed, `path` is left as
/// it was, and the error is returned in words ("" on success).
std::string write_file_atomically(const std::string& path, const std::string& text, mode_t mode);

/// mkdir -p: creates the missing folders of `dir` with `mode`.  "" or the error in words.
std::string make_dirs(const std::string& dir, mode_t mode);

}  // namespace gpumap
