// The lease seam: one lock file per GPU UUID in a folder shared by every user, held with
// flock(LOCK_EX).  The kernel drops a lease when the last descriptor of the holder's open
// file closes (the holder exits, however it dies), so a lease is never stale.
//
// The folder (default /tmp/gpumap-leases, or GPUMAP_LOCK_DIR) is created mode 1777 like
// /tmp.  Lock files are created 0666 (so other users can lock them) and never removed:
// removing a lock file races with a holder (two processes would lock two different inodes).
// Opening never follows a symlink and refuses anything but a regular file with one link;
// after locking, the file at the path must still be the inode that is locked.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// What a holder writes into its lock file after locking (truncated first).
struct LeaseRecord {
  int64_t pid = 0;
  int64_t uid = -1;
  std::string user;     // login name, or the uid as text
  std::string command;  // argv joined by spaces, newlines replaced
  int64_t start_unix = 0;   // for people ("since 18:02:11"); wall clock, so never used to judge liveness
  int64_t start_ticks = 0;  // the holder's start, clock ticks since boot (/proc/PID/stat field 22); 0: unknown
  int64_t job = 0;      // the job's process group once started (0: not started yet)
  bool launcher_gone = false;  // set by readers: gpumap (pid) has exited, the job still holds it
};

/// "pid=..\nuid=..\nuser=..\nstart=..\n[start_ticks=..\n][job=..\n]command=..\n"
std::string format_lease_record(const LeaseRecord& r);
/// Parses what format_lease_record wrote; nullopt for an empty or unreadable record.
std::optional<LeaseRecord> parse_lease_record(const std::string& text);

/// One line for people: "pid 123 (alice) since 18:02:11: python3 train.py"; when gpumap has
/// exited and its job holds the lease: "job 456 (alice) since ...: cmd (its gpumap has exited)".
std::string describe_lease(const LeaseRecord& r);

/// Whether a record read from a held lock file still describes the holder: its gpumap (pid)
/// lives and is the same process (the same start in ticks since boot, which no wall-clock step
/// moves; a record without start_ticks: started no later than the record), or its job's process group has a live member
/// (then launcher_gone is set).  nullopt otherwise: the lock is held by a process that is not
/// gpumap (e.g. flock(1)), and the file still carries an earlier holder's record.
std::optional<LeaseRecord> live_holder(std::optional<LeaseRecord> r);

/// The text for a held lease without a live record.
inline constexpr const char* kUnknownHolder = "held by a process with no gpumap record";

/// The lease folder for this environment value of GPUMAP_LOCK_DIR (nullopt or "": the default).
std::string lease_dir(const std::optional<std::string>& gpumap_lock_dir);

/// Creates the folder (mode 1777) when missing and checks it: a directory, not a symlink,
/// and not writable by its group or others unless sticky (else a member could delete a lock
/// file someone holds and lease the same GPU).  Its path is walked from "/" without following
/// a symbolic link (trailing slashes dropped, relative made absolute, ".." refused), and every
/// folder above it must be owned by root or this user and not group/other-writable unless
/// sticky (as sshd checks).  Throws Error(kExitError) naming it and the fix.
void prepare_lease_dir(const std::string& dir);

/// The lock file of a GPU: DIR/UUID.lock.  Throws Error(kExitUsage) for a UUID with
/// characters other than letters, digits and '-'.
std::string lease_path(const std::string& dir, const std::string& uuid);

/// A held lease: closing the descriptor (destructor) releases it.  Move-only.
class Lease {
 public:
  Lease() = default;
  Lease(int fd, std::string uuid) : fd_(fd), uuid_(std::move(uuid)) {}
  Lease(Lease&& o) noexcept : fd_(o.fd_), uuid_(std::move(o.uuid_)) { o.fd_ = -1; }
  Lease& operator=(Lease&& o) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();
  const std::string& uuid() const { return uuid_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string uuid_;
};

struct LeaseAttempt {
  std::optional<Lease> lease;           // set: acquired
  std::optional<LeaseRecord> holder;    // busy: who holds it (nullopt: no live gpumap record)
  bool busy = false;                    // another process holds it
  std::string refused;                  // non-empty: the lock file is unsafe or unusable (why)
};

/// Tries once (LOCK_EX|LOCK_NB, a few quick retries so a reader's brief shared lock does not
/// look like a holder) to lease `uuid`, and writes `record` into the file when it gets it.
/// The descriptor is O_CLOEXEC: only a command launched with it in LaunchSpec::keep_fds (the
/// leased job) inherits it, and then the lease lasts until the job's last process has exited.
LeaseAttempt try_lease(const std::string& dir, const std::string& uuid, const LeaseRecord& record);

/// Rewrites a held lease's record (e.g. with the job's process group once it started).
void rewrite_lease_record(const Lease& lease, const LeaseRecord& record);

struct LeaseState {
  bool held = false;
  std::optional<LeaseRecord> holder;  // when held and the record is readable and live
  std::string refused;                // the lock file is unsafe (same checks as try_lease)
};

/// Who holds `uuid`'s lease, without taking it: a shared non-blocking lock that succeeds means
/// nobody holds it.  Never creates the folder or the file.
LeaseState read_lease(const std::string& dir, const std::string& uuid);

/// A lease in words, the one family every listing uses: "" when free; else "pid 123 (alice)
/// since 18:02:11: cmd" (describe_lease), kUnknownHolder while the holder has written no record,
/// or "unsafe lock file: why" when gpumap refuses the lock file.  kShort is a table cell's form:
/// "pid 123 (alice)", "held", "unsafe".
enum class LeaseWords { kLine, kShort };
std::string lease_summary(const LeaseState& state, LeaseWords words = LeaseWords::kLine);

/// This process's record for `argv`: pid, uid, user name, start time now.
LeaseRecord current_lease_record(const std::vector<std::string>& argv);

}  // namespace gpumap
