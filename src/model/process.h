// What /proc says about one process, as plain values: os/proc.h reads it (ProcFs), the ps join
// (resolve/process_view.h) and its rules (findings/ps_rules.h) take it as a value.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// How one read went.  kGone: no such process (it exited, or never existed here);
/// kDenied: EACCES/EPERM (another user's process); kError: any other failure.
enum class ProcAccess { kOk, kGone, kDenied, kError };
/// "ok", "gone", "denied", "error".
const char* proc_access_name(ProcAccess a);

/// What gpumap reads of one process's /proc/PID/cmdline and environ at most.  Any user controls
/// them (a command line or an environment of several MB costs its owner nothing), and `ps`,
/// `metrics` and `serve` read them as root for every GPU process.  4 KiB of command line is more
/// than a table or a label shows; 1 MiB of environment is ten times the largest seen on HPC
/// nodes with many modules loaded; a cut is said in the output (`ps --json` `command_truncated`,
/// `environ_truncated`; a variable past the cut reads as unset).
inline constexpr size_t kMaxCmdlineBytes = 4096;
inline constexpr size_t kMaxEnvironBytes = 1u << 20;
/// The most of one NAME=VALUE kept (16 KiB: 300 MIG UUIDs in CUDA_VISIBLE_DEVICES); a longer one is
/// cut there and the process's environ_truncated set.
inline constexpr size_t kMaxEnvValueBytes = 16u << 10;
/// /proc/PID/cgroup: one line per hierarchy (13 on cgroup v1, 1 on v2), each a path of a few
/// hundred bytes; a longer file is not a pod's and is not read.
inline constexpr size_t kMaxCgroupBytes = 16u << 10;

/// What /proc says about one process.  Every field may be unknown (nullopt).
struct ProcProcess {
  uint32_t pid = 0;                           // the directory name under the proc root
  ProcAccess access = ProcAccess::kOk;        // of <root>/<pid>/status: kGone means exited
  bool zombie = false;                        // status "State: Z": exited, not yet reaped
  std::optional<uint32_t> uid;                // real uid (status "Uid:")
  std::optional<std::string> user;            // login name, else the uid as digits
  std::optional<std::string> command;         // cmdline, arguments joined by spaces; "[comm]" when empty
  std::optional<std::vector<std::string>> argv;  // cmdline split at its NULs; nullopt or empty: unknown (kernel thread)
  bool command_truncated = false;             // cmdline was longer than kMaxCmdlineBytes: `command` is its start
  ProcAccess environ_access = ProcAccess::kGone;
  std::string environ_error;                  // strerror text when environ_access is not kOk
  std::optional<std::vector<std::string>> environ;  // NAME=VALUE as at exec; nullopt: unreadable
  bool environ_truncated = false;             // environ was longer than kMaxEnvironBytes (the variables
                                              // after the cut are missing, the one cut short is dropped)
                                              // or a NAME=VALUE longer than kMaxEnvValueBytes was cut
  std::optional<std::vector<uint32_t>> nspid;  // status "NSpid:", outermost (this procfs's) first
  std::optional<uint32_t> ppid;               // status "PPid:" (in this procfs's namespace; 0: none)
  std::optional<int64_t> start_ticks;         // stat field 22 (clock ticks after boot): with the pid, which
                                              // process this is (a reused pid has a later one)
  std::optional<std::string> cgroup;          // /proc/PID/cgroup (read with environ); nullopt: unreadable
  // Who owns the folders of its cgroup (read with `cgroup` when a line names kubepods: the first
  // such, cgroup v2's first): the path, and the owning uid of each folder of it split at '/' (0:
  // the hierarchy's root); nullopt where not found (a path outside this cgroup namespace's view).
  std::string cgroup_owned_path;
  std::vector<std::optional<uint32_t>> cgroup_owners;
};

}  // namespace gpumap
