#include "os/lease.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

const char* kUuid = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";

std::string fresh_dir() {
  std::string t = ::testing::TempDir() + "/gpumap-lease-XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back(0);
  EXPECT_NE(mkdtemp(buf.data()), nullptr);
  return buf.data();
}

LeaseRecord rec(int64_t pid) {
  LeaseRecord r;
  r.pid = pid;
  r.uid = 1000;
  r.user = "alice";
  r.command = "python3 train.py --lr 0.1\nsecond line";
  r.start_unix = 1700000000;
  return r;
}

/// A record of this (live) test process: readers trust it; `user` tells holders apart.
LeaseRecord live_rec(const std::string& user) {
  LeaseRecord r = rec(getpid());
  r.user = user;
  r.start_unix = time(nullptr);
  return r;
}

/// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  pid_t p = fork();
  if (p == 0) _exit(0);
  waitpid(p, nullptr, 0);
  return p;
}

TEST(Lease, RecordRoundTripsAndFlattensNewlines) {
  auto r = parse_lease_record(format_lease_record(rec(42)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pid, 42);
  EXPECT_EQ(r->user, "alice");
  EXPECT_EQ(r->command, "python3 train.py --lr 0.1 second line");
  EXPECT_EQ(r->start_unix, 1700000000);
  EXPECT_FALSE(parse_lease_record(""));
  EXPECT_FALSE(parse_lease_record("pid=notanumber\n"));
  EXPECT_NE(describe_lease(*r).find("pid 42 (alice)"), std::string::npos);
}

TEST(Lease, SecondHolderIsRefusedUntilTheFirstCloses) {
  std::string dir = fresh_dir();
  EXPECT_FALSE(read_lease(dir, kUuid).held);  // no file yet: free, and nothing created
  EXPECT_NE(access(lease_path(dir, kUuid).c_str(), F_OK), 0);
  {
    LeaseAttempt a = try_lease(dir, kUuid, live_rec("first"));
    ASSERT_TRUE(a.lease) << a.refused;
    int flags = fcntl(a.lease->fd(), F_GETFD);
    EXPECT_TRUE(flags & FD_CLOEXEC) << "a lease descriptor must not leak into other programs gpumap runs";
    LeaseAttempt b = try_lease(dir, kUuid, live_rec("second"));  // a second open file description: flock conflicts
    EXPECT_FALSE(b.lease);
    EXPECT_TRUE(b.busy);
    ASSERT_TRUE(b.holder);
    EXPECT_EQ(b.holder->user, "first");
    LeaseState st = read_lease(dir, kUuid);
    EXPECT_TRUE(st.held);
    ASSERT_TRUE(st.holder);
    EXPECT_EQ(st.holder->user, "first");
    EXPECT_NE(lease_summary(st).find("pid " + std::to_string(getpid()) + " (first)"), std::string::npos);
  }
  EXPECT_FALSE(read_lease(dir, kUuid).held);
  EXPECT_EQ(lease_summary(read_lease(dir, kUuid)), "");
  LeaseAttempt c = try_lease(dir, kUuid, live_rec("third"));
  ASSERT_TRUE(c.lease);
  EXPECT_EQ(read_lease(dir, kUuid).holder->user, "third");  // truncated and rewritten
}

TEST(Lease, AnInheritedDescriptorKeepsTheLeaseAfterTheTakerExits) {
  std::string dir = fresh_dir();
  int done[2];
  ASSERT_EQ(pipe(done), 0);
  pid_t taker = fork();
  if (taker == 0) {  // takes the lease, hands the descriptor to a child of its own, and exits
    LeaseRecord r = live_rec("taker");
    LeaseAttempt a = try_lease(dir, kUuid, r);
    if (!a.lease) _exit(1);
    pid_t job = fork();
    if (job == 0) {
      char c;
      if (read(done[0], &c, 1) < 0) _exit(2);  // holds the inherited descriptor until told
      _exit(0);
    }
    r.job = job;
    rewrite_lease_record(*a.lease, r);
    _exit(0);
  }
  int status = 0;
  waitpid(taker, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  LeaseState st = read_lease(dir, kUuid);
  EXPECT_TRUE(st.held) << "the taker's child still holds the open file description";
  EXPECT_FALSE(try_lease(dir, kUuid, live_rec("late")).lease);
  // The record's gpumap pid is dead; its job is not a process group here, so nobody is named.
  EXPECT_FALSE(st.holder);
  EXPECT_EQ(lease_summary(st), kUnknownHolder);
  ASSERT_EQ(write(done[1], "x", 1), 1);
  for (int i = 0; i < 200 && read_lease(dir, kUuid).held; ++i) usleep(10000);
  EXPECT_FALSE(read_lease(dir, kUuid).held);
  close(done[0]);
  close(done[1]);
}

TEST(Lease, ARecordOfADeadHolderIsNotNamed) {
  std::string dir = fresh_dir();
  LeaseRecord old = live_rec("gone");
  old.pid = dead_pid();
  {
    LeaseAttempt a = try_lease(dir, kUuid, old);  // an earlier gpumap left its record behind
    ASSERT_TRUE(a.lease);
  }
  int fd = open(lease_path(dir, kUuid).c_str(), O_RDONLY);  // a program that is not gpumap locks it
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  LeaseState st = read_lease(dir, kUuid);
  EXPECT_TRUE(st.held);
  EXPECT_FALSE(st.holder);
  EXPECT_EQ(lease_summary(st), kUnknownHolder);
  EXPECT_EQ(lease_summary(st).find(std::to_string(old.pid)), std::string::npos);
  LeaseAttempt b = try_lease(dir, kUuid, live_rec("next"));
  EXPECT_TRUE(b.busy);
  EXPECT_FALSE(b.holder);
  close(fd);
}

TEST(Lease, LiveHolderNamesTheJobWhenItsGpumapHasExited) {
  LeaseRecord r = live_rec("alice");
  ASSERT_TRUE(live_holder(r));
  EXPECT_FALSE(live_holder(r)->launcher_gone);
  r.pid = dead_pid();
  EXPECT_FALSE(live_holder(r));
  r.job = getpgrp();  // this test's own group has a live member: this process
  auto j = live_holder(r);
  ASSERT_TRUE(j);
  EXPECT_TRUE(j->launcher_gone);
  EXPECT_NE(describe_lease(*j).find("job " + std::to_string(getpgrp()) + " (alice)"), std::string::npos);
  EXPECT_NE(describe_lease(*j).find("its gpumap has exited"), std::string::npos);
  EXPECT_EQ(describe_lease(*j).find("pid "), std::string::npos);
  LeaseRecord reused = live_rec("x");
  reused.start_unix = 1000;  // this pid's process started long after the record: pid reused
  EXPECT_FALSE(live_holder(reused));
  EXPECT_EQ(parse_lease_record(format_lease_record(r))->job, getpgrp());
}

// Liveness is judged by the holder's start in ticks since boot: a wall-clock step of an hour
// since the record was written (its start_unix an hour off) still names the live holder, not
// "(its gpumap has exited)".
TEST(Lease, AWallClockStepDoesNotMakeALiveHolderLookGone) {
  LeaseRecord r = current_lease_record({"gpumap", "run", "--", "train"});
  ASSERT_GT(r.start_ticks, 0);
  r.job = getpgrp();
  r.start_unix -= 3600 * 24;  // as if the clock was set a day forward after the record was written
  LeaseRecord back = *parse_lease_record(format_lease_record(r));
  EXPECT_EQ(back.start_ticks, r.start_ticks);
  auto h = live_holder(back);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->launcher_gone) << describe_lease(*h);
  back.start_ticks += 1;  // the pid is someone else's now (another start): not this holder
  back.job = 0;
  EXPECT_FALSE(live_holder(back));
}

// A lock file that cannot be created (the folder out of inodes or space, read-only, no file
// descriptors left) is gpumap's error (exit 1), never a GPU passed over (exit 6).
TEST(Lease, ALockFileThatCannotBeCreatedIsAnError) {
#if defined(__SANITIZE_ADDRESS__)
  // With no descriptor left, the sanitizer runtime itself fails (UBSan reported an invalid vptr on
  // the caught Error in CI): this check runs in the plain build only.
  GTEST_SKIP() << "needs a process without file descriptors, which the sanitizer runtime cannot run in";
#endif
  std::string dir = fresh_dir();
  pid_t p = fork();
  if (p == 0) {
    struct rlimit none{0, 0};
    setrlimit(RLIMIT_NOFILE, &none);  // every open fails (EMFILE), as a full folder's would (ENOSPC)
    try {
      try_lease(dir, kUuid, rec(1));
      _exit(10);
    } catch (const Error& e) {
      _exit(e.exit_code() == kExitError && std::string(e.what()).find("cannot create the lock file") != std::string::npos
                ? 0 : 11);
    } catch (...) {
      _exit(12);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(p, &status, 0), p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: refused quietly (a GPU passed over), 11: another error";
  rmdir(dir.c_str());
}

// A lease folder this user cannot write is named as a permission problem with the fix (chmod
// 1777, or another GPUMAP_LOCK_DIR), never blamed on free space (issue 43: "free space and
// inodes" was the whole hint for EACCES).  As root the child drops to nobody, since root writes anywhere.
TEST(Lease, ALockFolderWithoutWritePermissionIsNamedAsSuch) {
  std::string dir = fresh_dir();
  ASSERT_EQ(chmod(dir.c_str(), 0555), 0);  // read and enter, no write
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t p = fork();
  if (p == 0) {
    close(fds[0]);
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
                           setresuid(65534, 65534, 65534) != 0))
      _exit(20);
    if (access(dir.c_str(), X_OK) != 0) _exit(21);  // the temp folder's parents shut nobody out
    std::string got;
    try {
      try_lease(dir, kUuid, rec(1));
      got = "no error";
    } catch (const Error& e) {
      got = std::to_string(e.exit_code()) + "\n" + e.what() + "\n" + e.hint();
    }
    try {  // the lease folder to be made in it: root's to create, the folder above left closed
      prepare_lease_dir(dir + "/leases");
      got += "\n--\nno error";
    } catch (const Error& e) {
      got += "\n--\n" + std::string(e.what()) + "\n" + e.hint();
    }
    ssize_t n = write(fds[1], got.data(), got.size());
    _exit(n == static_cast<ssize_t>(got.size()) ? 0 : 22);
  }
  close(fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(p, &status, 0), p);
  chmod(dir.c_str(), 0700);
  rmdir(dir.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 20 || WEXITSTATUS(status) == 21) GTEST_SKIP() << "cannot run as a user shut out of " << dir;
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::string made = got.substr(got.find("\n--\n") + 4);
  std::string clean = dir;  // as prepare_lease_dir walks it: TempDir() ends with a slash
  for (size_t at; (at = clean.find("//")) != std::string::npos;) clean.erase(at, 1);
  got = got.substr(0, got.find("\n--\n"));
  EXPECT_EQ(got.rfind("1\n", 0), 0u) << got;  // gpumap's error (exit 1), not "no GPU free" (6)
  EXPECT_NE(got.find("cannot create the lock file " + dir + "/" + kUuid + ".lock: no write permission in " + dir +
                     " (owner "),
            std::string::npos)
      << got;
  EXPECT_NE(got.find(", mode 555) for user "), std::string::npos) << got;
  EXPECT_NE(got.find("chmod 1777 " + dir), std::string::npos) << got;
  EXPECT_NE(got.find("GPUMAP_LOCK_DIR"), std::string::npos) << got;
  EXPECT_EQ(got.find("free space"), std::string::npos) << got;
  EXPECT_NE(made.find("cannot create the lease folder " + clean + "/leases: no write permission in " + clean), std::string::npos)
      << made;
  EXPECT_NE(made.find("mkdir -m 1777 " + clean + "/leases"), std::string::npos) << made;
  EXPECT_EQ(made.find("chmod"), std::string::npos) << made;
  EXPECT_EQ(made.find("free space"), std::string::npos) << made;
}

TEST(Lease, FilesAreWorldLockableWhateverTheUmask) {
  std::string dir = fresh_dir() + "/leases";
  mode_t old = umask(077);
  prepare_lease_dir(dir);
  LeaseAttempt a = try_lease(dir, kUuid, rec(1));
  umask(old);
  ASSERT_TRUE(a.lease);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  ASSERT_EQ(stat(lease_path(dir, kUuid).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

TEST(Lease, PlantedSymlinkIsRefusedAndItsTargetUntouched) {
  std::string dir = fresh_dir();
  std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(symlink(victim.c_str(), lease_path(dir, kUuid).c_str()), 0);
  LeaseAttempt a = try_lease(dir, kUuid, rec(1));
  EXPECT_FALSE(a.lease);
  EXPECT_NE(a.refused.find("symbolic link"), std::string::npos) << a.refused;
  EXPECT_NE(read_lease(dir, kUuid).refused.find("symbolic link"), std::string::npos);
  std::ifstream in(victim);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "precious");
}

TEST(Lease, NonRegularAndHardLinkedFilesAreRefused) {
  std::string dir = fresh_dir();
  ASSERT_EQ(mkfifo(lease_path(dir, kUuid).c_str(), 0666), 0);
  EXPECT_NE(try_lease(dir, kUuid, rec(1)).refused.find("not a regular file"), std::string::npos);

  const char* other = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";
  std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(link(victim.c_str(), lease_path(dir, other).c_str()), 0);
  LeaseAttempt a = try_lease(dir, other, rec(1));
  EXPECT_FALSE(a.lease);
  EXPECT_NE(a.refused.find("hard links"), std::string::npos) << a.refused;
}

TEST(Lease, FolderChecks) {
  std::string base = fresh_dir();
  std::string link_dir = base + "/link";
  ASSERT_EQ(symlink(base.c_str(), link_dir.c_str()), 0);
  EXPECT_THROW(prepare_lease_dir(link_dir), Error);
  std::string open_dir = base + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);  // writable by all, not sticky
  EXPECT_THROW(prepare_lease_dir(open_dir), Error);
  ASSERT_EQ(chmod(open_dir.c_str(), 01777), 0);
  EXPECT_NO_THROW(prepare_lease_dir(open_dir));
  ASSERT_EQ(chmod(open_dir.c_str(), 0775), 0);  // group-writable, not sticky: a member could delete a lock
  try {
    prepare_lease_dir(open_dir);
    ADD_FAILURE() << "a group-writable non-sticky folder was trusted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("its group"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("tmpfiles.d"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("chmod 1777"), std::string::npos) << e.hint();
  }
  ASSERT_EQ(chmod(open_dir.c_str(), 01775), 0);
  EXPECT_NO_THROW(prepare_lease_dir(open_dir));
  EXPECT_THROW(lease_path(base, "../etc/passwd"), Error);
  EXPECT_EQ(lease_dir(std::nullopt), "/tmp/gpumap-leases");
  EXPECT_EQ(lease_dir(std::string("")), "/tmp/gpumap-leases");
  EXPECT_EQ(lease_dir(std::string("/x")), "/x");
}

/// The message prepare_lease_dir throws for `dir`, or "" when it accepts it.
std::string folder_refusal(const std::string& dir) {
  try {
    prepare_lease_dir(dir);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitError) << e.what();
    return e.what();
  }
}

// A trailing slash made lstat follow the link ("/path/link/"), and only the folder itself was
// checked: a 1777 folder inside a 0777 non-sticky one (whose users can swap it) was accepted.
TEST(Lease, FolderPathIsWalkedFromTheRootWithoutFollowingLinks) {
  std::string base = std::filesystem::path(fresh_dir()).lexically_normal().string();  // messages name it so
  std::string real = base + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(chmod(real.c_str(), 01777), 0);
  ASSERT_EQ(symlink(real.c_str(), (base + "/link").c_str()), 0);
  EXPECT_EQ(folder_refusal(real), "");
  EXPECT_EQ(folder_refusal(real + "/"), "");
  for (const std::string& via_link : {base + "/link", base + "/link/", base + "/link//"})
    EXPECT_NE(folder_refusal(via_link).find("symbolic link"), std::string::npos) << via_link;
  EXPECT_NE(folder_refusal(base + "/link/inner").find("reached through " + base + "/link, a symbolic link"),
            std::string::npos);

  std::string open_parent = base + "/open";
  ASSERT_EQ(mkdir(open_parent.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((open_parent + "/leases").c_str(), 0700), 0);
  ASSERT_EQ(chmod((open_parent + "/leases").c_str(), 01777), 0);
  ASSERT_EQ(chmod(open_parent.c_str(), 0777), 0);  // anyone can rename leases/ away and plant another
  std::string why = folder_refusal(open_parent + "/leases");
  EXPECT_NE(why.find("is inside " + open_parent + ", writable by everyone but not sticky"), std::string::npos) << why;
  EXPECT_NE(folder_refusal(open_parent + "/leases/deeper").find("is inside " + open_parent), std::string::npos);
  ASSERT_EQ(chmod(open_parent.c_str(), 0775), 0);
  EXPECT_NE(folder_refusal(open_parent + "/leases").find("writable by its group"), std::string::npos);
  ASSERT_EQ(chmod(open_parent.c_str(), 01777), 0);  // sticky, like /tmp: fine
  EXPECT_EQ(folder_refusal(open_parent + "/leases"), "");
  EXPECT_NE(folder_refusal(open_parent + "/../open/leases").find("`..`"), std::string::npos);
  EXPECT_NE(folder_refusal(base + "/missing/leases").find("does not exist"), std::string::npos);

  // Relative: made absolute, walked the same way.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(base.c_str()), 0);
  EXPECT_NE(folder_refusal("link").find("symbolic link"), std::string::npos);
  EXPECT_EQ(folder_refusal("real"), "");
  ASSERT_EQ(chdir(cwd), 0);
}

// An ancestor owned by another (non-root) user: they could replace the lease folder.
TEST(Lease, FolderInsideAnotherUsersFolderIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  std::string base = std::filesystem::path(fresh_dir()).lexically_normal().string();  // messages name it so
  std::string theirs = base + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((theirs + "/leases").c_str(), 0700), 0);
  ASSERT_EQ(chmod((theirs + "/leases").c_str(), 01777), 0);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);  // nobody
  std::string why = folder_refusal(theirs + "/leases");
  EXPECT_NE(why.find("is inside " + theirs + ", owned by "), std::string::npos) << why;
  EXPECT_NE(why.find("(not root or you)"), std::string::npos) << why;
  ASSERT_EQ(chown(theirs.c_str(), 0, 0), 0);
  EXPECT_EQ(folder_refusal(theirs + "/leases"), "");
}


// Issue 56 item 7: a lease folder owned by another user was accepted, though its owner may delete
// any lock file in it (the sticky bit does not bind a folder's owner) and so lease a held GPU
// twice.  The default folder is in /tmp: the first user after boot owned it.
TEST(Lease, AFolderOwnedByAnotherUserIsRefusedNamingTheOwnerAndTheFix) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  std::string base = std::filesystem::path(fresh_dir()).lexically_normal().string();
  std::string leases = base + "/leases";
  ASSERT_EQ(mkdir(leases.c_str(), 0700), 0);
  ASSERT_EQ(chmod(leases.c_str(), 01777), 0);
  ASSERT_EQ(chown(leases.c_str(), 65534, 65534), 0);  // nobody, as if nobody had created it first
  std::string why;
  try {
    prepare_lease_dir(leases);
    ADD_FAILURE() << "a lease folder of another user was trusted";
  } catch (const Error& e) {
    why = e.what();
    EXPECT_EQ(e.exit_code(), kExitError);
    EXPECT_NE(why.find("the lease folder " + leases + " is owned by "), std::string::npos) << why;
    EXPECT_NE(why.find("(not root or you)"), std::string::npos) << why;
    EXPECT_NE(e.hint().find("chown root:root " + leases), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("tmpfiles.d"), std::string::npos) << e.hint();
  }
  ASSERT_EQ(chown(leases.c_str(), 0, 0), 0);  // the fix the hint gives
  EXPECT_EQ(folder_refusal(leases), "");
}

}  // namespace
}  // namespace gpumap
