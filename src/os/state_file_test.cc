#include "os/state_file.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

class StateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = ::testing::TempDir() + "/gpumap-state-XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back(0);
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static size_t entries(const std::string& d) {
    auto it = std::filesystem::directory_iterator(d);
    return static_cast<size_t>(std::distance(begin(it), end(it)));
  }
  std::string dir_;
};

TEST_F(StateFile, WritesReplacesAndReadsBack) {
  std::string p = dir_ + "/snap.json";
  EXPECT_EQ(read_small_file(p, 100).error, ENOENT);
  EXPECT_EQ(write_file_atomically(p, "first", 0644), "");
  EXPECT_EQ(write_file_atomically(p, "second", 0644), "");
  FileText f = read_small_file(p, 100);
  EXPECT_EQ(f.error, 0);
  EXPECT_EQ(f.text, "second");
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(entries(dir_), 1u);  // no temporary file left
  EXPECT_TRUE(read_small_file(p, 3).too_big);
  EXPECT_EQ(read_small_file(dir_, 100).error, EISDIR);
}

// A write that fails half-way (here: the file size limit, as on a full disk) leaves the old file
// exactly as it was and no temporary file behind.
TEST_F(StateFile, FailedWriteKeepsTheOldFile) {
  std::string p = dir_ + "/snap.json";
  ASSERT_EQ(write_file_atomically(p, "old", 0644), "");
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old_action);
  struct rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string err = write_file_atomically(p, std::string(4096, 'x'), 0644);
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &old_action, nullptr);
  EXPECT_NE(err.find("cannot write " + p), std::string::npos) << err;
  EXPECT_EQ(read_small_file(p, 100).text, "old");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(StateFile, FolderThatCannotHoldTheFile) {
  EXPECT_NE(write_file_atomically(dir_ + "/no/such/folder/f", "x", 0644).find("cannot create a file in " + dir_ + "/no/such/folder"),
            std::string::npos);
  EXPECT_EQ(make_dirs(dir_ + "/a/b/c", 0700), "");
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/a/b/c").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_NE(make_dirs(dir_ + "/file/sub", 0700), "");
}


// Whatever stands at the target and is not a regular file is refused and left as it was: the
// write never goes through a link (even a dangling one), never replaces a FIFO, a socket-like
// node, a folder; and reading one never blocks (a FIFO with no writer).
TEST_F(StateFile, RefusesEverythingButARegularFile) {
  std::string fifo = dir_ + "/fifo", link = dir_ + "/link", dangling = dir_ + "/dangling", folder = dir_ + "/folder";
  std::string secret = dir_ + "/secret";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(secret) << "root's";
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  ASSERT_EQ(symlink(secret.c_str(), link.c_str()), 0);
  ASSERT_EQ(symlink((dir_ + "/nowhere").c_str(), dangling.c_str()), 0);
  ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  for (const auto& [path, kind] : std::vector<std::pair<std::string, std::string>>{
           {fifo, "a FIFO"}, {link, "a symbolic link"}, {dangling, "a symbolic link"}, {folder, "a folder"}}) {
    std::string err = write_file_atomically(path, "new", 0644);
    EXPECT_NE(err.find(path + " is " + kind + ", not a regular file: not replacing it"), std::string::npos) << err;
    EXPECT_EQ(check_replaceable(path), err);
  }
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(lstat(dangling.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(lstat((dir_ + "/nowhere").c_str(), &st), 0) << "the dangling link's target was created";
  ASSERT_EQ(stat(secret.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_small_file(secret, 100).text, "root's");
  EXPECT_EQ(entries(dir_), 5u) << "no temporary file left";

  // Reading: a FIFO with no writer is not opened (this would block forever otherwise).
  FileText f = read_small_file(fifo, 100);
  EXPECT_EQ(f.error, EINVAL);
  EXPECT_EQ(f.not_regular, "a FIFO");
  EXPECT_EQ(read_small_file(link, 100).text, "root's");  // followed when asked to
  EXPECT_EQ(read_small_file(link, 100, false).not_regular, "a symbolic link");
  EXPECT_EQ(read_small_file(link, 100, false).text, "");
  EXPECT_EQ(read_small_file(folder, 100, false).error, EISDIR);
}

// A device node (here /dev/null's numbers) is neither opened nor replaced.  Only root may mknod.
TEST_F(StateFile, RefusesADeviceNode) {
  std::string dev = dir_ + "/null";
  if (mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs root (CAP_MKNOD): " << std::strerror(errno);
  std::string err = write_file_atomically(dev, "new", 0644);
  EXPECT_NE(err.find("is a character device, not a regular file"), std::string::npos) << err;
  struct stat st {};
  ASSERT_EQ(lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(read_small_file(dev, 100).not_regular, "a character device");
}

// A folder anyone may write and that is not sticky: anyone could swap the file after it is
// written, so nothing is written there.
TEST_F(StateFile, RefusesAFolderEveryoneMayWriteThatIsNotSticky) {
  std::string open_dir = dir_ + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0755), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  std::string err = write_file_atomically(open_dir + "/f", "x", 0644);
  EXPECT_NE(err.find("writable by everyone but not sticky"), std::string::npos) << err;
  EXPECT_EQ(entries(open_dir), 0u);
  ASSERT_EQ(chmod(open_dir.c_str(), 01777), 0);
  EXPECT_EQ(write_file_atomically(open_dir + "/f", "x", 0644), "");
}

}  // namespace
}  // namespace gpumap
