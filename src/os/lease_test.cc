#include "os/lease.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
    LeaseAttempt a = try_lease(dir, kUuid, rec(111));
    ASSERT_TRUE(a.lease) << a.refused;
    int flags = fcntl(a.lease->fd(), F_GETFD);
    EXPECT_TRUE(flags & FD_CLOEXEC) << "a lease descriptor must not leak into the command";
    LeaseAttempt b = try_lease(dir, kUuid, rec(222));  // a second open file description: flock conflicts
    EXPECT_FALSE(b.lease);
    EXPECT_TRUE(b.busy);
    ASSERT_TRUE(b.holder);
    EXPECT_EQ(b.holder->pid, 111);
    LeaseState st = read_lease(dir, kUuid);
    EXPECT_TRUE(st.held);
    ASSERT_TRUE(st.holder);
    EXPECT_EQ(st.holder->pid, 111);
    EXPECT_NE(lease_summary(st).find("pid 111"), std::string::npos);
  }
  EXPECT_FALSE(read_lease(dir, kUuid).held);
  EXPECT_EQ(lease_summary(read_lease(dir, kUuid)), "");
  LeaseAttempt c = try_lease(dir, kUuid, rec(333));
  ASSERT_TRUE(c.lease);
  EXPECT_EQ(read_lease(dir, kUuid).holder->pid, 333);  // truncated and rewritten
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
  EXPECT_THROW(lease_path(base, "../etc/passwd"), Error);
  EXPECT_EQ(lease_dir(std::nullopt), "/tmp/gpumap-leases");
  EXPECT_EQ(lease_dir(std::string("")), "/tmp/gpumap-leases");
  EXPECT_EQ(lease_dir(std::string("/x")), "/x");
}

}  // namespace
}  // namespace gpumap
