#include "os/state_file.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
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

}  // namespace
}  // namespace gpumap
