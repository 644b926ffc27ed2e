// The /proc seam: what gpumap reads about other processes (owner, command line, the
// environment they started with, their PID in each PID namespace).  Everything goes
// through ProcFs so tests can point it at a fixture directory (Seams::proc_root, from $GPUMAP_PROC_ROOT).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/process.h"  // ProcAccess, ProcProcess: the values read

namespace gpumap {

/// What /proc/PID/stat says that `top` needs between full reads: state ('R', 'S', 'Z'...), parent,
/// start (clock ticks since boot) and comm (changes on exec); and what it shows beside the GPU's
/// numbers: CPU time (utime + stime, clock ticks) and resident memory (pages, the counter statm's
/// second field shows too).
struct ProcStat {
  char state = '?';
  uint32_t ppid = 0;
  int64_t start_ticks = -1;
  std::string comm;
  uint64_t cpu_ticks = 0;   // fields 14 + 15: user and system time
  uint64_t rss_pages = 0;   // field 24
};
/// Parses a stat file's text (comm may hold spaces and parentheses); nullopt when malformed.
std::optional<ProcStat> parse_proc_stat(const std::string& text);

class ProcFs {
 public:
  /// `root`: a directory laid out like /proc (Seams::proc_root: /proc, or a test fixture).
  /// `cgroup_root`: where the cgroup hierarchies are mounted (cgroup v2's, or v1's one folder per
  /// controller; v2 of a hybrid host under unified/): the owners of a pod's cgroup folders are read
  /// there (ProcProcess::cgroup_owners).
  explicit ProcFs(std::string root = "/proc", std::string cgroup_root = "/sys/fs/cgroup");
  const std::string& root() const { return root_; }

  /// Reads status, cmdline and (when want_environ) environ of <root>/<pid>.  Never throws.
  ProcProcess read(uint32_t pid, bool want_environ = true) const;

  /// readlink(<root>/<who>/ns/pid), e.g. "pid:[4026531836]"; nullopt when unreadable.
  std::optional<std::string> pid_ns_link(const std::string& who) const;
  /// The NSpid fields of <root>/<who>/status ("self", "1", a pid); nullopt when unreadable.
  std::optional<std::vector<uint32_t>> nspid(const std::string& who) const;
  /// <root>/<pid>/stat, parsed; nullopt when gone or unreadable.
  std::optional<ProcStat> stat(uint32_t pid) const;
  /// Seconds since boot (the first number of <root>/uptime); nullopt when unreadable.  With a
  /// process's start_ticks, how long it has run; between two frames, the time CPU use is over.
  std::optional<double> uptime_s() const;

 private:
  std::string root_, cgroup_root_;
  mutable std::map<uint32_t, std::string> users_;  // uid -> name cache
};

/// kill(pid, sig): "" when sent, else why not in words ("not permitted: it belongs to another
/// user", "no such process").  Signal 0 only checks.
std::string signal_process(uint32_t pid, int sig);
/// Sends `sig` to `pid` only when `same()` ("" when it is still the process meant, else why not)
/// says so, checked after the process is held: through a pidfd (pidfd_open, Linux 5.3) opened
/// before the check and signalled after it (pidfd_send_signal), so a pid reused between the check
/// and the signal is never hit; without pidfds, kill(2) right after the check.  "" when sent.
std::string signal_process_checked(uint32_t pid, int sig, const std::function<std::string()>& same);

/// The init PID namespace's link text: its inode is fixed by the kernel (PROC_PID_INIT_INO).
inline constexpr const char* kInitPidNamespace = "pid:[4026531836]";

/// The kernel's clock ticks per second (stat's times) and page size in bytes (stat's rss).
int64_t clock_ticks_per_second();
int64_t page_size_bytes();

/// Parses the "NSpid:" line of a status file's text; nullopt when absent or malformed.
std::optional<std::vector<uint32_t>> parse_nspid(const std::string& status_text);
/// Parses the real uid from the "Uid:" line; nullopt when absent.
std::optional<uint32_t> parse_status_uid(const std::string& status_text);
/// The first number of a status line ("Uid:", "PPid:"); nullopt when absent or malformed.
std::optional<uint32_t> parse_status_number(const std::string& status_text, const char* key);
/// The cgroup line whose folders' owners are read: the first naming "kubepods" (cgroup v2's line
/// first), as its hierarchy ("" for v2, else the v1 controllers: "pids", "cpu,cpuacct") and path;
/// nullopt when none does.
std::optional<std::pair<std::string, std::string>> kubepods_cgroup_line(const std::string& proc_cgroup_text);
/// The owning uid of each folder of `path` (split at '/'; [0] the hierarchy's root) under
/// `cgroup_root` (for v2: cgroup_root or cgroup_root/unified; for v1: cgroup_root/<hierarchy>);
/// empty when the path's folder is not there (a ".." path from a cgroup namespace, another host's).
std::vector<std::optional<uint32_t>> cgroup_folder_owners(const std::string& cgroup_root, const std::string& hierarchy,
                                                          const std::string& path);
/// Splits NUL-separated text (cmdline, environ); a trailing NUL ends the last item.
std::vector<std::string> split_nul(const std::string& text);

}  // namespace gpumap
