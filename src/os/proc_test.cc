#include "os/proc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

std::string fixture_root() {
  std::string t = ::testing::TempDir();
  if (t.empty() || t.back() != '/') t += "/";
  std::string tmpl = t + "gpumap-proc-XXXXXX";
  std::vector<char> b(tmpl.begin(), tmpl.end());
  b.push_back(0);
  return mkdtemp(b.data());
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(ProcParse, NspidAndUid) {
  std::string st = "Name:\tsleep\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t7\n";
  EXPECT_EQ(parse_nspid(st), (std::vector<uint32_t>{4242, 7}));
  EXPECT_EQ(parse_status_uid(st), 1000u);
  EXPECT_FALSE(parse_nspid("Name:\tx\n"));
  EXPECT_FALSE(parse_nspid("NSpid:\tabc\n"));
  EXPECT_FALSE(parse_status_uid("Name:\tx\nUid:\n"));
}

TEST(ProcParse, SplitNul) {
  EXPECT_EQ(split_nul(std::string("a=1\0b=\0", 7)), (std::vector<std::string>{"a=1", "b="}));
  EXPECT_TRUE(split_nul("").empty());
  EXPECT_EQ(split_nul(std::string("x\0\0y", 4)), (std::vector<std::string>{"x", "", "y"}));
}

TEST(ProcFsFixture, AZombieIsMarked) {
  std::string root = fixture_root();
  mkdir((root + "/12").c_str(), 0755);
  write(root + "/12/status", "Name:\tpython3\nState:\tZ (zombie)\nUid:\t0\t0\t0\t0\n");
  mkdir((root + "/13").c_str(), 0755);
  write(root + "/13/status", "Name:\tpython3\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\n");
  ProcFs fs(root);
  EXPECT_TRUE(fs.read(12, false).zombie);
  EXPECT_FALSE(fs.read(13, false).zombie);
}

TEST(ProcFsFixture, ReadsAProcessExitedAndUnreadableEnviron) {
  std::string root = fixture_root();
  mkdir((root + "/10").c_str(), 0755);
  write(root + "/10/status", "Name:\tpython3\nUid:\t0\t0\t0\t0\nNSpid:\t10\n");
  write(root + "/10/cmdline", std::string("python3\0train.py\0", 17));
  write(root + "/10/environ", std::string("CUDA_VISIBLE_DEVICES=1\0HOME=/\0", 31));
  mkdir((root + "/11").c_str(), 0755);
  write(root + "/11/status", "Name:\tkworker\nUid:\t0\t0\t0\t0\n");
  write(root + "/11/cmdline", "");
  mkdir((root + "/11/environ").c_str(), 0755);  // reading it fails (EISDIR): unknown, like EACCES

  ProcFs fs(root + "/");
  EXPECT_EQ(fs.root(), root);
  ProcProcess a = fs.read(10);
  EXPECT_EQ(a.access, ProcAccess::kOk);
  EXPECT_EQ(a.command, "python3 train.py");
  EXPECT_EQ(a.user, "root");
  ASSERT_TRUE(a.environ);
  EXPECT_EQ(a.environ->at(0), "CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(a.nspid, (std::vector<uint32_t>{10}));

  ProcProcess b = fs.read(11);
  EXPECT_EQ(b.access, ProcAccess::kOk);
  EXPECT_EQ(b.command, "[kworker]");
  EXPECT_FALSE(b.environ);
  EXPECT_EQ(b.environ_access, ProcAccess::kError);
  EXPECT_FALSE(b.environ_error.empty());

  ProcProcess c = fs.read(12);
  EXPECT_EQ(c.access, ProcAccess::kGone);
  EXPECT_FALSE(c.environ);
  EXPECT_FALSE(c.user);
}

TEST(ProcFsFixture, DeniedWhenNotRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  std::string root = fixture_root();
  mkdir((root + "/20").c_str(), 0755);
  write(root + "/20/status", "Name:\tx\nUid:\t0\t0\t0\t0\n");
  write(root + "/20/environ", "A=1");
  chmod((root + "/20/environ").c_str(), 0);
  ProcProcess p = ProcFs(root).read(20);
  EXPECT_EQ(p.environ_access, ProcAccess::kDenied);
}

TEST(ProcFsReal, ReadsItself) {
  ProcFs fs("/proc");
  ProcProcess p = fs.read(static_cast<uint32_t>(getpid()));
  EXPECT_EQ(p.access, ProcAccess::kOk);
  ASSERT_TRUE(p.command);
  EXPECT_FALSE(p.command->empty());
  EXPECT_TRUE(p.environ);
  EXPECT_TRUE(fs.pid_ns_link("self"));
  ASSERT_TRUE(fs.nspid("self"));
  EXPECT_EQ(fs.nspid("self")->back(), static_cast<uint32_t>(getpid()));
}

TEST(ParseProcStat, CommWithSpacesAndParenthesesAndTheFieldsTopNeeds) {
  std::optional<ProcStat> st = parse_proc_stat("4242 (a (b) c) Z 17 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->comm, "a (b) c");
  EXPECT_EQ(st->state, 'Z');
  EXPECT_EQ(st->ppid, 17u);
  EXPECT_EQ(st->start_ticks, 98765);
  EXPECT_FALSE(parse_proc_stat("4242 (cut"));
  EXPECT_FALSE(parse_proc_stat("4242 (x) S 1 2"));  // no start time
  EXPECT_FALSE(parse_proc_stat(""));
}

TEST(ParseProcStat, CpuTimeAndResidentPagesForTop) {
  // fields: 14 utime 250, 15 stime 50, 22 start 98765, 24 rss 4096 pages
  std::optional<ProcStat> st =
      parse_proc_stat("4242 (python3) S 17 4242 4242 0 -1 0 0 0 0 0 250 50 0 0 20 0 1 0 98765 123456789 4096 0\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->cpu_ticks, 300u);
  EXPECT_EQ(st->rss_pages, 4096u);
  EXPECT_EQ(st->start_ticks, 98765);
}

TEST(ProcFs, UptimeIsTheFirstNumberOfItsFile) {
  std::string dir = fixture_root();
  EXPECT_FALSE(ProcFs(dir).uptime_s());  // no file: unknown
  write(dir + "/uptime", "12345.67 98765.43\n");
  ASSERT_TRUE(ProcFs(dir).uptime_s());
  EXPECT_DOUBLE_EQ(*ProcFs(dir).uptime_s(), 12345.67);
  write(dir + "/uptime", "garbage\n");
  EXPECT_FALSE(ProcFs(dir).uptime_s());
  EXPECT_TRUE(ProcFs("/proc").uptime_s());
  EXPECT_GT(clock_ticks_per_second(), 0);
  EXPECT_GT(page_size_bytes(), 0);
}

TEST(ProcFs, ReadsItsOwnStatAndParent) {
  std::optional<ProcStat> st = ProcFs("/proc").stat(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->ppid, static_cast<uint32_t>(getppid()));
  EXPECT_GT(st->start_ticks, 0);
  ProcProcess p = ProcFs("/proc").read(static_cast<uint32_t>(getpid()), false);
  EXPECT_EQ(p.ppid, static_cast<uint32_t>(getppid()));
}


// The owners of a pod's cgroup folders, read under the cgroup mount (a fixture here: the seam); the
// line read is the first naming kubepods, cgroup v2's first.
TEST(ProcCgroupOwners, EachFolderOfTheKubepodsLineFromTheMount) {
  std::string root = fixture_root();
  ASSERT_EQ(mkdir((root + "/kubepods").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/kubepods/podx").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/pids").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/pids/kubepods").c_str(), 0755), 0);
  auto me = std::optional<uint32_t>(geteuid());
  using Owners = std::vector<std::optional<uint32_t>>;
  EXPECT_EQ(cgroup_folder_owners(root, "", "/kubepods/podx"), (Owners{me, me, me}));
  EXPECT_EQ(cgroup_folder_owners(root, "pids", "/kubepods"), (Owners{me, me}));
  EXPECT_TRUE(cgroup_folder_owners(root, "", "/kubepods/missing").empty());
  EXPECT_TRUE(cgroup_folder_owners(root, "", "/../kubepods/podx").empty()) << "outside this namespace's view";
  auto line = kubepods_cgroup_line("12:pids:/kubepods/podx\n0::/kubepods/podx/c\n1:name=systemd:/\n");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->first, "");
  EXPECT_EQ(line->second, "/kubepods/podx/c");
  line = kubepods_cgroup_line("12:pids:/kubepods/podx\n0::/\n");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->first, "pids");
  EXPECT_FALSE(kubepods_cgroup_line("0::/user.slice\n"));
  // ProcFs::read reads them with the cgroup file.
  std::string proc = fixture_root();
  ASSERT_EQ(mkdir((proc + "/42").c_str(), 0755), 0);
  write(proc + "/42/status", "Name:\tx\nUid:\t0\t0\t0\t0\n");
  write(proc + "/42/environ", std::string("A=1\0", 4));
  write(proc + "/42/cgroup", "0::/kubepods/podx\n");
  ProcProcess p = ProcFs(proc, root).read(42);
  EXPECT_EQ(p.cgroup_owned_path, "/kubepods/podx");
  EXPECT_EQ(p.cgroup_owners, (Owners{me, me, me}));
}
}  // namespace
}  // namespace gpumap
