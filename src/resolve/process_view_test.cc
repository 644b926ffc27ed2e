#include "resolve/process_view.h"

#include <gtest/gtest.h>

#include "os/proc.h"  // kInitPidNamespace
#include "resolve/process_view_testing.h"

namespace gpumap {
namespace {

using namespace testing_ps;

// The join's facts; the findings on these rows are tested in findings/ps_rules_test.cc.

TEST(PsView, EachProcessGetsItsOwnOrdinal) {
  World w;
  Snapshot s = four_processes(w);
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].cuda_ordinal, 1);
  EXPECT_FALSE(r.rows[1].cuda_ordinal);
  EXPECT_EQ(r.rows[2].cuda_ordinal, 0);
  EXPECT_EQ(r.rows[3].cuda_ordinal, 1);
  EXPECT_EQ(r.rows[2].local_pid, 102u);
  EXPECT_EQ(r.pids_on_gpu[0], (std::set<uint32_t>{100, 101}));
  EXPECT_EQ(r.gpu_users, 2u);
  for (const ProcessRow& row : r.rows) EXPECT_TRUE(row.findings.empty()) << "the join makes no findings";
}

TEST(PsView, MappingIsCachedPerDistinctPair) {
  std::vector<uint32_t> many;
  for (uint32_t p = 1000; p < 11000; ++p) many.push_back(p);
  Snapshot s = two_gpus({many, {}});
  World w;
  for (uint32_t p : many) w.add(p, {p % 2 ? "CUDA_VISIBLE_DEVICES=0" : "CUDA_VISIBLE_DEVICES=1,0", "HOME=/x"});
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows.size(), 10000u);
  EXPECT_EQ(w.views, 2);
  EXPECT_EQ(r.distinct_views, 2u);
  EXPECT_EQ(r.views.size(), 2u);
  EXPECT_EQ(r.rows[0].view, 0u);
  EXPECT_EQ(r.rows[1].view, 1u);
  EXPECT_EQ(r.rows[2].view, 0u);
}

TEST(PsView, BadDeviceOrderIsAnError) {
  Snapshot s = two_gpus({{7}, {}});
  World w;
  w.add(7, {"CUDA_DEVICE_ORDER=pci_bus_id"});
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].cuda_error, "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_FALSE(r.rows[0].cuda_ordinal);
}

TEST(PsView, ExitedAndUnreadable) {
  Snapshot s = two_gpus({{5, 6}, {}});
  World w;
  w.add_denied(6, "carol");
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].state, ProcessState::kExited);
  EXPECT_FALSE(r.rows[0].zombie);
  EXPECT_EQ(r.rows[1].state, ProcessState::kRunning);
  EXPECT_FALSE(r.rows[1].environ_known);
  EXPECT_FALSE(r.rows[1].cuda_ordinal);
  EXPECT_EQ(r.pids_on_gpu[0], std::set<uint32_t>{6}) << "an exited pid shares nothing";
}

TEST(PsView, AZombieIsExitedNotRunningWithAnUnreadableEnvironment) {
  Snapshot s = two_gpus({{9}, {}});
  World w;
  w.add_zombie(9, "dave");
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].state, ProcessState::kExited);
  EXPECT_TRUE(r.rows[0].zombie);
}

TEST(PsView, UnlistedGpu) {
  Snapshot s = two_gpus({{}, {}});
  s.gpus[1].processes.reset();
  World w;
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.unlisted_gpus, std::vector<uint32_t>{1});
}

TEST(PsView, LocalRankAndJobOfEachProcess) {
  Snapshot s = two_gpus({{30, 31}, {}});
  World w;
  w.add(30, {"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=job7"});
  w.add(31, {"SLURM_LOCALID=2", "SLURM_JOB_ID=9", "SLURM_STEP_ID=0"});
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].rank_variable, "LOCAL_RANK");
  EXPECT_EQ(r.rows[0].rank, 1u);
  EXPECT_EQ(r.rows[0].job, "torchrun job7");
  EXPECT_EQ(r.rows[1].rank_variable, "SLURM_LOCALID");
  EXPECT_EQ(r.rows[1].job, "slurm 9.0");
}

TEST(PsPidNamespace, Classify) {
  const std::string init = kInitPidNamespace, other = "pid:[4026532178]";
  EXPECT_TRUE(classify_pid_namespace(std::nullopt, other, other, std::vector<uint32_t>{2}).joinable);
  EXPECT_TRUE(classify_pid_namespace(init, init, init, std::vector<uint32_t>{77}).joinable);
  auto child = classify_pid_namespace(init, other, other, std::vector<uint32_t>{2});
  EXPECT_FALSE(child.joinable);
  EXPECT_EQ(child.procfs, other);
  // pid 1 unreadable: our own namespace stands in when our NSpid has one field.
  EXPECT_FALSE(classify_pid_namespace(init, std::nullopt, other, std::vector<uint32_t>{2}).joinable);
  // an ancestor's procfs (unshare --pid without a new /proc): assumed NVML's; we sit one level down.
  auto anc = classify_pid_namespace(init, std::nullopt, other, std::vector<uint32_t>{5563, 2});
  EXPECT_TRUE(anc.joinable);
  EXPECT_EQ(anc.self_level, 1u);
}

TEST(PsPidNamespace, NotJoinableRowsSaySo) {
  Snapshot s = two_gpus({{4242}, {}});
  World w;
  w.add(4242, {"CUDA_VISIBLE_DEVICES=0"});  // a different process that happens to have that number
  PidNamespaceView ns;
  ns.joinable = false;
  PsResult r = join_ps(s, ns, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].state, ProcessState::kNotVisible);
  EXPECT_FALSE(r.rows[0].command);
  EXPECT_FALSE(r.rows[0].cuda_ordinal);
}

TEST(PsPidNamespace, LocalPidFromNspid) {
  Snapshot s = two_gpus({{5563, 900}, {}});
  World w;
  w.add(5563, {});
  w.procs[5563].nspid = std::vector<uint32_t>{5563, 2};
  w.add(900, {});  // lives only in the outer namespace
  PidNamespaceView ns;
  ns.self_level = 1;
  PsResult r = join_ps(s, ns, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].local_pid, 2u);
  EXPECT_FALSE(r.rows[1].local_pid);
}

}  // namespace
}  // namespace gpumap
