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

#include "model/lease.h"

namespace gpumap {

/// Whether a record read from a held lock file still describes the holder: its gpumap (pid)
/// lives and is the same process (the same start in ticks since boot, which no wall-clock step
/// moves; a record without start_ticks: started no later than the record), or its job's process group has a live member
/// (then launcher_gone is set).  nullopt otherwise: the lock is held by a process that is not
/// gpumap (e.g. flock(1)), and the file still carries an earlier holder's record.
std::optional<LeaseRecord> live_holder(std::optional<LeaseRecord> r);

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

/// Who holds `uuid`'s lease, without taking it: a shared non-blocking lock that succeeds means
/// nobody holds it.  Never creates the folder or the file.
LeaseState read_lease(const std::string& dir, const std::string& uuid);

/// This process's record for `argv`: pid, uid, user name, start time now.
LeaseRecord current_lease_record(const std::vector<std::string>& argv);

}  // namespace gpumap
