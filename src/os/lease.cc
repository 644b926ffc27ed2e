#include "os/lease.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "model/error.h"
#include "model/text.h"
#include "os/proc.h"

namespace gpumap {
namespace {

constexpr const char* kDefaultDir = "/tmp/gpumap-leases";

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

/// A file mode as `ls` and chmod write it: 1777, 755.
std::string octal_mode(unsigned mode) {
  std::ostringstream o;
  o << std::oct << mode;
  return o.str();
}

std::string user_name(uid_t uid) {
  struct passwd pw, *res = nullptr;
  char buf[1024];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) return pw.pw_name;
  return std::to_string(uid);
}

/// Why `what` (creating something in `dir`: a lock file, or the lease folder `made`) failed with
/// `err`, the cause named first: a permission problem or a read-only file system is said as
/// such, never as "free space".
Error folder_write_error(const std::string& what, const std::string& dir, int err, const std::string& made = "") {
  const std::string other = "set GPUMAP_LOCK_DIR to a folder every user of these GPUs can write";
  switch (err) {
    case EACCES:
    case EPERM: {
      std::string owner;
      struct stat st;
      if (stat(dir.c_str(), &st) == 0)
        owner = " (owner " + user_name(st.st_uid) + ", mode " + octal_mode(st.st_mode & 07777) + ")";
      std::string msg = what + ": no write permission in " + dir + owner + " for user " + user_name(geteuid());
      if (!made.empty())  // the folder above is not the lease folder: never advise opening it to everyone
        return Error(kExitError, msg,
                     "have root create it for every user: `mkdir -m 1777 " + made + "` (at boot: a tmpfiles.d entry `d " +
                         made + " 1777 root root -`), or " + other);
      return Error(kExitError, msg,
                   "have its owner or root make it shared and sticky like /tmp: `chmod 1777 " + dir + "`, or " + other);
    }
    case EROFS:
      return Error(kExitError, what + ": " + dir + " is on a read-only file system",
                   other + " on a writable file system (e.g. GPUMAP_LOCK_DIR=/run/gpumap-leases)");
    case ENOSPC:
    case EDQUOT:
      return Error(kExitError, what + ": " + dir + " is out of space or inodes" + (err == EDQUOT ? " (this user's quota)" : ""),
                   "free space and inodes in " + dir + " (df -i " + dir + "), or " + other);
    case EMFILE:
    case ENFILE:
      return Error(kExitError, what + ": too many open files",
                   "raise the limit (ulimit -n) or close files, then run it again");
    default:
      return Error(kExitError, what + ": " + std::strerror(err), other);
  }
}

/// Checks an fstat'ed lock file; "" when it is safe to lock and write.
std::string check_lock_file(const struct stat& st, const std::string& path) {
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (st.st_nlink != 1)
    return path + " has " + std::to_string(st.st_nlink) + " hard links (a planted link to another file?)";
  if (st.st_mode & (S_ISUID | S_ISGID | S_IXUSR | S_IXGRP | S_IXOTH))
    return path + " is executable or setuid (mode " + octal_mode(st.st_mode & 07777) + ", not a lock file)";
  return "";
}

/// Opens DIR/UUID.lock for locking: never follows a symlink, only a regular file with one
/// link, and the inode opened is the one lstat saw.  create: make it (0666) when missing.
/// Returns the fd, or -1 with `why` set (empty `why` and ENOENT: missing and !create).
int open_lock_file(const std::string& path, bool create, bool write, std::string& why) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    struct stat lst;
    if (lstat(path.c_str(), &lst) == 0) {
      if (S_ISLNK(lst.st_mode)) {
        why = path + " is a symbolic link (refusing to follow it; remove it)";
        return -1;
      }
      if (std::string w = check_lock_file(lst, path); !w.empty()) {
        why = w;
        return -1;
      }
      // Opening an existing file without O_CREAT: fs.protected_regular allows it in a sticky folder.
      int fd = open(path.c_str(), (write ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      if (fd < 0 && write && errno == EACCES) {
        why = path + " is not writable by this user (owner uid " + std::to_string(lst.st_uid) +
              ", mode " + octal_mode(lst.st_mode & 0777) + "); its owner or root must remove it";
        return -1;
      }
      if (fd < 0 && errno == ENOENT) continue;  // removed in between: look again
      if (fd < 0) {
        why = sys_error("cannot open " + path);
        return -1;
      }
      struct stat st;
      if (fstat(fd, &st) != 0 || st.st_dev != lst.st_dev || st.st_ino != lst.st_ino) {
        close(fd);
        continue;  // replaced between lstat and open
      }
      if (std::string w = check_lock_file(st, path); !w.empty()) {
        close(fd);
        why = w;
        return -1;
      }
      return fd;
    }
    if (errno != ENOENT) {
      why = sys_error("cannot stat " + path);
      return -1;
    }
    if (!create) {
      why = "";
      errno = ENOENT;
      return -1;
    }
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0 && errno == EEXIST) continue;  // another process created it: open that one
    if (fd < 0) {
      // The folder's fault (no write permission, read-only, out of space or inodes, too many
      // open files), not this GPU's: an error of gpumap's (exit 1), never "not enough GPUs" (exit 6).
      int err = errno;
      throw folder_write_error("cannot create the lock file " + path, path.substr(0, path.rfind('/')), err);
    }
    fchmod(fd, 0666);  // the umask took bits away; every user must be able to lock it
    return fd;
  }
  why = path + " keeps changing under gpumap (replaced while opening it)";
  return -1;
}

/// When process `pid` started, in clock ticks since boot (/proc/PID/stat field 22: the
/// monotonic boot clock, which wall-clock steps do not move); nullopt if unknown.
std::optional<int64_t> process_start_ticks(int64_t pid) {
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  std::optional<ProcStat> st = parse_proc_stat(text);
  if (!st) return std::nullopt;
  return st->start_ticks;
}

/// When process `pid` started (Unix seconds: boot time + start ticks); nullopt if unknown.
std::optional<int64_t> process_start_unix(int64_t pid) {
  std::optional<int64_t> ticks = process_start_ticks(pid);
  if (!ticks) return std::nullopt;
  std::ifstream kstat("/proc/stat");
  std::string key;
  long long btime = -1;
  while (kstat >> key)
    if (key == "btime" && kstat >> btime) break;
  long hz = sysconf(_SC_CLK_TCK);
  if (btime < 0 || hz <= 0) return std::nullopt;
  return btime + *ticks / hz;
}

/// kill(target, 0): a process (target > 0) or a process group (target < -1) with a live member.
bool process_exists(pid_t target) { return target != 0 && target != -1 && (kill(target, 0) == 0 || errno == EPERM); }

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
    if (out.size() > 65536) break;
  }
  return out;
}

}  // namespace

std::optional<LeaseRecord> live_holder(std::optional<LeaseRecord> r) {
  if (!r) return r;
  if (r->pid > 0 && r->pid <= INT32_MAX && process_exists(static_cast<pid_t>(r->pid))) {
    // A live process with that pid is the holder only if it is the same process: the same start
    // in ticks since boot (a wall-clock step moves the Unix start times, not the ticks).  A
    // record without ticks (an older gpumap): one that started after the record is someone else.
    if (r->start_ticks > 0) {
      std::optional<int64_t> ticks = process_start_ticks(r->pid);
      if (!ticks || *ticks == r->start_ticks) return r;
    } else {
      std::optional<int64_t> started = process_start_unix(r->pid);
      if (!started || r->start_unix <= 0 || *started <= r->start_unix + 1) return r;
    }
  }
  if (r->job > 1 && r->job <= INT32_MAX && process_exists(-static_cast<pid_t>(r->job))) {
    r->launcher_gone = true;
    return r;
  }
  return std::nullopt;
}

namespace {

/// Why an ancestor folder of the lease folder is unsafe ("" when safe), as sshd's StrictModes
/// judges the folders above a user's files: owned by root or this user, and not writable by its
/// group or others unless sticky (else they could move the lease folder away and put their own
/// in its place, with lock files nobody holds).
std::string check_ancestor(const struct stat& st, const std::string& path, const std::string& dir) {
  if (st.st_uid != 0 && st.st_uid != geteuid())
    return "the lease folder " + dir + " is inside " + path + ", owned by " + user_name(st.st_uid) +
           " (not root or you): they could replace the lease folder";
  if ((st.st_mode & (S_IWOTH | S_IWGRP)) && !(st.st_mode & S_ISVTX))
    return "the lease folder " + dir + " is inside " + path + ", writable by " +
           (st.st_mode & S_IWOTH ? "everyone" : "its group") +
           " but not sticky: anyone of them could move the lease folder away and put another in its place";
  return "";
}

/// Walks the absolute path `given`'s ancestors from "/" one component at a time (openat with
/// O_NOFOLLOW, so no symbolic link is followed and each folder checked is the one walked
/// through) and checks each.  Returns the path without repeated slashes and "." components;
/// throws Error(kExitError) naming the first unsafe ancestor.
std::string check_ancestors(const std::string& given) {
  std::vector<std::string> parts;
  std::string dir;
  for (size_t pos = 0; pos < given.size();) {
    size_t slash = given.find('/', pos);
    if (slash == std::string::npos) slash = given.size();
    std::string c = given.substr(pos, slash - pos);
    if (c == "..")
      throw Error(kExitError, "the lease folder " + given + " is named with `..`",
                  "set GPUMAP_LOCK_DIR to the folder's real path (realpath -m " + given + ")");
    if (!c.empty() && c != ".") parts.push_back(c), dir += "/" + c;
    pos = slash + 1;
  }
  if (dir.empty()) dir = "/";
  int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error(kExitError, sys_error("cannot open /"));
  std::string path = "/";
  for (size_t i = 0; i < parts.size(); ++i) {  // fd is `path`, the folder holding parts[i]
    struct stat st;
    if (fstat(fd, &st) != 0) {
      close(fd);
      throw Error(kExitError, sys_error("cannot stat " + path));
    }
    if (std::string w = check_ancestor(st, path, dir); !w.empty()) {
      close(fd);
      throw Error(kExitError, w,
                  "use a lease folder whose parents only root (or you) can change, e.g. the default "
                  "/tmp/gpumap-leases; or fix " + path + " (chmod o-w,g-w or +t)");
    }
    if (i + 1 >= parts.size()) break;
    int next = openat(fd, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    struct stat lst;
    if (next < 0 && err == ENOTDIR && fstatat(fd, parts[i].c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
      err = ELOOP;  // O_PATH | O_NOFOLLOW | O_DIRECTORY on a symbolic link: ENOTDIR
    close(fd);
    path += (path == "/" ? "" : "/") + parts[i];
    if (next < 0) {
      errno = err;
      if (err == ENOENT)
        throw Error(kExitError, "cannot create the lease folder " + dir + ": " + path + " does not exist",
                    "set GPUMAP_LOCK_DIR to a folder in an existing one, which every user of these GPUs can reach");
      if (err == ELOOP || err == ENOTDIR)
        throw Error(kExitError, "the lease folder " + dir + " is reached through " + path + ", " +
                                    (err == ELOOP ? "a symbolic link" : "not a folder") + " (refusing to follow it)",
                    "set GPUMAP_LOCK_DIR to the folder's real path (realpath " + dir + ")");
      throw Error(kExitError, sys_error("cannot open " + path));
    }
    fd = next;
  }
  close(fd);
  return dir;
}

}  // namespace

std::string lease_dir(const std::optional<std::string>& gpumap_lock_dir) {
  return gpumap_lock_dir && !gpumap_lock_dir->empty() ? *gpumap_lock_dir : kDefaultDir;
}

void prepare_lease_dir(const std::string& given) {
  // "/path/link/" would follow the link: lstat sees the folder it names.  The path is made
  // absolute and its ancestors are checked from "/" down.
  std::string dir = given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!dir.empty() && dir[0] != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) throw Error(kExitError, sys_error("the lease folder " + dir + ": cannot get the current folder"));
    dir = std::string(cwd) + "/" + dir;
  }
  dir = check_ancestors(dir);
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) throw Error(kExitError, sys_error("cannot stat the lease folder " + dir));
    mode_t old = umask(0);
    int rc = mkdir(dir.c_str(), 01777);
    int err = errno;
    umask(old);
    if (rc != 0 && err != EEXIST) {
      throw folder_write_error("cannot create the lease folder " + dir, dir.substr(0, std::max<size_t>(dir.rfind('/'), 1)), err, dir);
    }
    if (lstat(dir.c_str(), &st) != 0) throw Error(kExitError, sys_error("cannot stat the lease folder " + dir));
  }
  if (S_ISLNK(st.st_mode))
    throw Error(kExitError, "the lease folder " + dir + " is a symbolic link (refusing to follow it)",
                "remove it, or set GPUMAP_LOCK_DIR to a real folder");
  if (!S_ISDIR(st.st_mode))
    throw Error(kExitError, "the lease folder " + dir + " is not a directory",
                "remove it, or set GPUMAP_LOCK_DIR to a folder");
  if ((st.st_mode & (S_IWOTH | S_IWGRP)) && !(st.st_mode & S_ISVTX))
    throw Error(kExitError,
                "the lease folder " + dir + " is writable by " + (st.st_mode & S_IWOTH ? "everyone" : "its group") +
                    " but not sticky: any of them could delete a lock file someone holds and lease the same GPU",
                "chmod 1777 " + dir + " (sticky, like /tmp), or have root create it at boot with a tmpfiles.d "
                "entry: `d " + dir + " 1777 root root -`");
  // The sticky bit does not bind the folder's owner: whoever created it first (the default sits in
  // the shared /tmp) may delete a lock file someone holds and lease the same GPU twice.
  if (st.st_uid != 0 && st.st_uid != geteuid())
    throw Error(kExitError,
                "the lease folder " + dir + " is owned by " + user_name(st.st_uid) +
                    " (not root or you): its owner can delete a lock file someone holds and lease the same GPU twice",
                "have root take it (it stays 1777): `sudo chown root:root " + dir +
                    "`; gpumap's .deb and .rpm create the default one root-owned at boot (tmpfiles.d/gpumap.conf: `d "
                    "/tmp/gpumap-leases 1777 root root -`); or set GPUMAP_LOCK_DIR to a folder of your own");
}

std::string lease_path(const std::string& dir, const std::string& uuid) {
  if (uuid.empty()) throw Error(kExitUsage, "empty GPU UUID for a lease");
  for (char c : uuid)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-'))
      throw Error(kExitUsage, "GPU UUID `" + uuid + "` has a character that cannot name a lock file");
  return dir + "/" + uuid + ".lock";
}

Lease& Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    uuid_ = std::move(o.uuid_);
    o.fd_ = -1;
  }
  return *this;
}

Lease::~Lease() {
  if (fd_ >= 0) close(fd_);
}

LeaseAttempt try_lease(const std::string& dir, const std::string& uuid, const LeaseRecord& record) {
  LeaseAttempt a;
  std::string path = lease_path(dir, uuid);
  std::string why;
  int fd = open_lock_file(path, true, true, why);
  if (fd < 0) {
    a.refused = why;
    return a;
  }
  bool locked = false;
  for (int i = 0; i < 4 && !locked; ++i) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) locked = true;
    else if (errno == EWOULDBLOCK) {
      struct timespec ts{0, 2 * 1000 * 1000};  // a reader's shared lock lasts microseconds
      nanosleep(&ts, nullptr);
    } else {
      a.refused = sys_error("flock " + path);
      close(fd);
      return a;
    }
  }
  if (!locked) {
    a.busy = true;
    a.holder = live_holder(parse_lease_record(read_all(fd)));
    close(fd);
    return a;
  }
  // The file at the path must still be the one locked (nobody removed or replaced it).
  struct stat st, lst;
  if (fstat(fd, &st) != 0 || lstat(path.c_str(), &lst) != 0 || st.st_dev != lst.st_dev || st.st_ino != lst.st_ino) {
    close(fd);
    a.busy = true;  // lost a race with a replacement: let the caller try again
    return a;
  }
  a.lease.emplace(fd, uuid);
  rewrite_lease_record(*a.lease, record);
  return a;
}

void rewrite_lease_record(const Lease& lease, const LeaseRecord& record) {
  std::string text = format_lease_record(record);
  if (ftruncate(lease.fd(), 0) != 0 ||
      pwrite(lease.fd(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    // The lock holds without a record; readers then show kUnknownHolder.
  }
}

LeaseState read_lease(const std::string& dir, const std::string& uuid) {
  LeaseState s;
  std::string path = lease_path(dir, uuid);
  std::string why;
  int fd = open_lock_file(path, false, false, why);
  if (fd < 0) {
    if (!why.empty()) s.refused = why;
    return s;
  }
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
    if (access(path.c_str(), W_OK) != 0 && errno == EACCES)  // try_lease could not take it either
      s.refused = path + " is not writable by this user; its owner or root must remove it";
  } else if (errno == EWOULDBLOCK) {
    s.held = true;
    s.holder = live_holder(parse_lease_record(read_all(fd)));
  } else {
    s.refused = sys_error("flock " + path);
  }
  close(fd);
  return s;
}

LeaseRecord current_lease_record(const std::vector<std::string>& argv) {
  LeaseRecord r;
  r.pid = getpid();
  r.uid = getuid();
  r.user = user_name(getuid());
  for (const std::string& a : argv) r.command += (r.command.empty() ? "" : " ") + a;
  r.start_unix = static_cast<int64_t>(::time(nullptr));
  r.start_ticks = process_start_ticks(getpid()).value_or(0);
  return r;
}

}  // namespace gpumap
