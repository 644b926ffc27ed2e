// The renderings (output/) of `job_map` answers, in process: every test of
// src/session/job_map_test.cc asserted on what the answer prints, so the file moved here
// whole and session/ tests test answers (issue 57; tests/layers_test.cc).
// `gpumap job-map` in process (session/job_map.h's job_map on FakeSession's "mig" host: GPU 0 has
// MIG devices, GPU 1 is whole): the files the prolog writes and the epilog empties, the defaults
// taken from the environment, what is refused, and a folder where things were planted (as the
// Slurm prolog and epilog run it, as root).  Exit codes as the command ends with them: a thrown
// Error's code, else 1 when JobMapAnswer::failed.  Kept black-box in tests/cli_files_test.cc:
// an escape code in a job id never reaching the terminal (main prints the error).
#include "session/job_map.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/job_map_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

mode_t kind_of(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

class JobMap : public ::testing::Test {
 protected:
  JobMapAnswer prolog(const std::string& job, const std::string& gpus = "1") {
    return job_map(f_.session(), {.prolog = true, .dir = dir_, .job = job, .gpus = gpus});
  }
  JobMapAnswer epilog(const std::string& job) {
    return job_map(f_.session(), {.prolog = false, .dir = dir_, .job = job});
  }
  /// The exit code `gpumap job-map` ends with; `err`: what it prints on stderr (the error's
  /// message, or the warnings and notes).
  int code_of(const std::function<JobMapAnswer()>& run, std::string* err = nullptr) {
    try {
      JobMapAnswer a = run();
      if (err) *err = job_map_messages(a);
      return a.failed ? kExitError : kExitOk;
    } catch (const Error& e) {
      if (err) *err = e.what();
      return e.exit_code();
    }
  }
  FakeSession f_{"mig"};
  std::string dir_ = f_.dir() + "/map";
};

TEST_F(JobMap, PrologAndEpilogWriteDcgmExporterFiles) {
  JobMapAnswer a = prolog("17");
  EXPECT_FALSE(a.failed);
  EXPECT_EQ(a.done.changed, std::vector<std::string>{"1"});
  EXPECT_EQ(read_file(dir_ + "/1"), "17\n");
  EXPECT_EQ(job_map_text(a), "gpumap job-map: job 17 added to " + dir_ + "/1\n");
  EXPECT_EQ(job_map_json(a)["action"], "prolog");
  // The folder and job from dcgm-exporter's and Slurm's variables.
  Session b = f_.other({"DCGM_HPC_JOB_MAPPING_DIR=" + dir_, "SLURM_JOB_ID=18"});
  EXPECT_EQ(job_map(b, {.prolog = true, .gpus = "1"}).job_id, "18");
  EXPECT_EQ(read_file(dir_ + "/1"), "17\n18\n");
  // A MIG device's file is GPU.GI; the allocation from SLURM_JOB_GPUS.
  const MigDevice& mig = f_.session().snapshot().gpus[0].mig_devices.at(0);
  ASSERT_TRUE(mig.gpu_instance_id);
  Session c = f_.other({"SLURM_JOB_GPUS=" + mig.uuid});
  JobMapAnswer m = job_map(c, {.prolog = true, .dir = dir_, .job = "19"});
  EXPECT_EQ(read_file(dir_ + "/0." + std::to_string(*mig.gpu_instance_id)), "19\n");
  JobMapAnswer e = epilog("17");
  EXPECT_FALSE(e.failed);
  EXPECT_EQ(read_file(dir_ + "/1"), "18\n");
  EXPECT_EQ(job_map_json(e)["action"], "epilog");
  epilog("18");
  EXPECT_EQ(kind_of(dir_ + "/1"), 0u) << "a file with no job left is removed";
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("20", "7"); }, &err), kExitUsage);
  EXPECT_NE(err.find("minor number 7"), std::string::npos) << err;
}

TEST_F(JobMap, WhatIsMissingIsRefusedNamingTheOptionAndVariable) {
  std::string err;
  EXPECT_EQ(code_of([&] { return job_map(f_.session(), {.prolog = true, .job = "20", .gpus = "1"}); }, &err),
            kExitUsage);
  EXPECT_NE(err.find("neither --dir nor DCGM_HPC_JOB_MAPPING_DIR is set"), std::string::npos) << err;
  EXPECT_EQ(code_of([&] { return job_map(f_.session(), {.prolog = true, .dir = "", .job = "20", .gpus = "1"}); }),
            kExitUsage);
  EXPECT_EQ(code_of([&] { return job_map(f_.session(), {.prolog = true, .dir = dir_, .gpus = "1"}); }, &err),
            kExitUsage);
  EXPECT_NE(err.find("neither --job nor SLURM_JOB_ID is set"), std::string::npos) << err;
  EXPECT_EQ(code_of([&] { return job_map(f_.session(), {.prolog = true, .dir = dir_, .job = "20"}); }, &err),
            kExitUsage);
  EXPECT_NE(err.find("no allocation"), std::string::npos) << err;
  EXPECT_EQ(code_of([&] { return prolog("20", " , "); }, &err), kExitUsage);
  EXPECT_NE(err.find("the allocation is empty"), std::string::npos) << err;
  EXPECT_EQ(kind_of(dir_), 0u) << "nothing is created for a refused request";
}

TEST_F(JobMap, AMappingFileThatIsALinkIsNeverFollowed) {
  ASSERT_EQ(code_of([&] { return prolog("7"); }), kExitOk);
  std::string secret = dir_ + "/../secret";
  std::ofstream(secret) << "root only\n";
  chmod(secret.c_str(), 0600);
  ASSERT_EQ(unlink((dir_ + "/1").c_str()), 0);
  ASSERT_EQ(symlink(secret.c_str(), (dir_ + "/1").c_str()), 0);
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("8"); }, &err), kExitError)
      << "the job's GPU is not labelled: the prolog must say so";
  EXPECT_NE(err.find(dir_ + "/1 is a symbolic link, not a mapping file: left alone"), std::string::npos) << err;
  EXPECT_EQ(kind_of(dir_ + "/1"), static_cast<mode_t>(S_IFLNK));
  EXPECT_EQ(read_file(secret), "root only\n");
  struct stat st {};
  ASSERT_EQ(stat(secret.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(code_of([&] { return epilog("8"); }, &err), kExitOk) << err;
  EXPECT_EQ(read_file(secret), "root only\n");
}

// Issue 56 item 12: a mapping file that was a hard link to a 0600 file was rewritten 0644 with
// the file's lines in it.  A file with another link is left alone (the other name is never
// written through or copied), and a file rewritten keeps its mode.
TEST_F(JobMap, AHardLinkedMappingFileIsLeftAloneAndAFileKeepsItsMode) {
  ASSERT_EQ(code_of([&] { return prolog("7"); }), kExitOk);
  std::string secret = dir_ + "/../secret";
  std::ofstream(secret) << "root only\n";
  chmod(secret.c_str(), 0600);
  ASSERT_EQ(unlink((dir_ + "/1").c_str()), 0);
  ASSERT_EQ(link(secret.c_str(), (dir_ + "/1").c_str()), 0);
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("8"); }, &err), kExitError)
      << "the job's GPU is not labelled: the prolog must say so";
  EXPECT_NE(err.find(dir_ + "/1 has 2 hard links"), std::string::npos) << err;
  struct stat st {
  }, sst{};
  ASSERT_EQ(stat((dir_ + "/1").c_str(), &st), 0);
  ASSERT_EQ(stat(secret.c_str(), &sst), 0);
  EXPECT_EQ(st.st_ino, sst.st_ino) << "the link is left as it was";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_file(dir_ + "/1"), "root only\n");
  EXPECT_EQ(code_of([&] { return epilog("8"); }, &err), kExitOk) << err;  // left alone, as a symbolic link is
  EXPECT_EQ(read_file(secret), "root only\n");
  // One link, mode 0640: rewritten (prolog and epilog) with 0640 kept.
  ASSERT_EQ(unlink((dir_ + "/1").c_str()), 0);
  std::ofstream(dir_ + "/1") << "5\n";
  chmod((dir_ + "/1").c_str(), 0640);
  EXPECT_EQ(code_of([&] { return prolog("9"); }, &err), kExitOk) << err;
  ASSERT_EQ(stat((dir_ + "/1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(read_file(dir_ + "/1"), "5\n9\n");
  EXPECT_EQ(code_of([&] { return epilog("5"); }, &err), kExitOk) << err;
  ASSERT_EQ(stat((dir_ + "/1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(JobMap, ALockThatIsALinkCreatesNothing) {
  ASSERT_EQ(code_of([&] { return prolog("7"); }), kExitOk);
  std::string target = dir_ + "/../planted";
  ASSERT_EQ(unlink((dir_ + "/.gpumap-job-map.lock").c_str()), 0);
  ASSERT_EQ(symlink(target.c_str(), (dir_ + "/.gpumap-job-map.lock").c_str()), 0);
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("8"); }, &err), kExitError);
  EXPECT_NE(err.find("is a symbolic link, not the lock file"), std::string::npos) << err;
  EXPECT_EQ(kind_of(target), 0u) << "the lock link was followed";
  EXPECT_EQ(read_file(dir_ + "/1"), "7\n");
}

// A FIFO and a sub-folder named like GPU files: the epilog passes them with a warning (it once
// hung on the FIFO, and stopped at the folder leaving later files stale), and finishes the rest.
TEST_F(JobMap, EpilogPassesAFifoAndAFolderAndCarriesOn) {
  ASSERT_EQ(code_of([&] { return prolog("7", "0,1"); }), kExitOk);
  ASSERT_EQ(mkfifo((dir_ + "/0.9").c_str(), 0644), 0);
  ASSERT_EQ(mkdir((dir_ + "/00").c_str(), 0755), 0);
  std::string err;
  EXPECT_EQ(code_of([&] { return epilog("7"); }, &err), kExitOk) << err;
  EXPECT_NE(err.find("gpumap job-map: warning: " + dir_ + "/0.9 is a FIFO, not a mapping file: left alone"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(dir_ + "/00 is a folder, not a mapping file: left alone"), std::string::npos) << err;
  EXPECT_EQ(kind_of(dir_ + "/0"), 0u) << "job 7 left GPU 0's file";
  EXPECT_EQ(kind_of(dir_ + "/1"), 0u) << "the epilog stopped before GPU 1's file";
  EXPECT_EQ(kind_of(dir_ + "/0.9"), static_cast<mode_t>(S_IFIFO));
  EXPECT_EQ(job_map_json(epilog("7"))["skipped"].size(), 2u);
}

// A mapping file far larger than any gpumap writes is left as it is, never cut to one job.
TEST_F(JobMap, AHugeMappingFileIsNotTruncated) {
  ASSERT_EQ(code_of([&] { return prolog("7"); }), kExitOk);
  std::string big;
  for (int i = 0; big.size() <= (16u << 20); ++i) big += std::to_string(1000000 + i) + "\n";
  std::ofstream(dir_ + "/1") << big;
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("8"); }, &err), kExitError);
  EXPECT_NE(err.find("larger than 16 MiB"), std::string::npos) << err;
  EXPECT_EQ(read_file(dir_ + "/1").size(), big.size());
}

TEST_F(JobMap, JobIdsAndGpuIdsAreValidated) {
  for (const char* bad : {" 42 ", "42\n43",
                          "\x1b]0;owned\x07"
                          "42",
                          "", "4 2", "42_", "+1", "42/x", "1_2_3"}) {
    std::string err;
    EXPECT_EQ(code_of([&] { return prolog(bad); }, &err), kExitUsage) << "`" << bad << "`: " << err;
    EXPECT_NE(err.find("is not a Slurm job id"), std::string::npos) << err;
  }
  EXPECT_EQ(kind_of(dir_), 0u) << "nothing is created for a refused id";
  for (const char* good : {"42", "123_4", "77+1"}) EXPECT_EQ(code_of([&] { return prolog(good); }), kExitOk) << good;
  EXPECT_EQ(read_file(dir_ + "/1"), "42\n123_4\n77+1\n");
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("50", "99999999999999999999999999"); }, &err), kExitUsage) << err;
  EXPECT_NE(err.find("no GPU has minor number 99999999999999999999999999"), std::string::npos) << err;
  EXPECT_EQ(code_of([&] { return prolog("51", "0001"); }), kExitOk) << "leading zeros still name minor 1";
}

TEST_F(JobMap, AFolderOthersMayWriteIsRefused) {
  ASSERT_EQ(code_of([&] { return prolog("7"); }), kExitOk);
  ASSERT_EQ(chmod(dir_.c_str(), 01777), 0);
  std::string err;
  EXPECT_EQ(code_of([&] { return prolog("8"); }, &err), kExitError);
  EXPECT_NE(err.find("is unsafe: it is writable by everyone"), std::string::npos) << err;
  EXPECT_EQ(read_file(dir_ + "/1"), "7\n");
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  std::string real = dir_ + "-real";
  ASSERT_EQ(rename(dir_.c_str(), real.c_str()), 0);
  ASSERT_EQ(symlink(real.c_str(), dir_.c_str()), 0);
  EXPECT_EQ(code_of([&] { return epilog("7"); }, &err), kExitError);
  EXPECT_NE(err.find("is a symbolic link"), std::string::npos) << err;
  EXPECT_EQ(read_file(real + "/1"), "7\n");
}

}  // namespace
}  // namespace gpumap
