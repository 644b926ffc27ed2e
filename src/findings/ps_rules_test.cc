#include "findings/ps_rules.h"

#include <gtest/gtest.h>

#include "resolve/process_view_testing.h"

namespace gpumap {
namespace {

using namespace testing_ps;

// The rows as `gpumap ps` gets them: the join (resolve/process_view_test.cc tests its facts), then the rules.
PsResult ps(const Snapshot& s, const PidNamespaceView& ns, World& w) {
  PsResult r = join_ps(s, ns, w.reader(), w.viewer());
  add_ps_findings(s, ns, r);
  return r;
}

bool has(const ProcessRow& r, const std::string& id, Severity sev) {
  for (const Finding& f : r.findings)
    if (f.id == id && f.severity == sev) return true;
  return false;
}

// A finding of the row's GPU (PsResult::gpu_findings) that the row refers to.
const GpuFinding* gpu_finding(const PsResult& r, size_t row, const std::string& id) {
  for (size_t g : r.rows[row].gpu_findings)
    if (r.gpu_findings.at(g).finding.id == id) return &r.gpu_findings[g];
  return nullptr;
}

bool has_gpu(const PsResult& r, size_t row, const std::string& id, Severity sev) {
  const GpuFinding* g = gpu_finding(r, row, id);
  return g && g->finding.severity == sev;
}

TEST(PsRules, OutsideTheVisibleSetNoVisibilityAndASharedGpu) {
  World w;
  Snapshot s = four_processes(w);
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_TRUE(has(r.rows[1], "outside-visible-set", Severity::kError));
  EXPECT_TRUE(has_gpu(r, 3, "no-visibility-shared-host", Severity::kInfo));
  EXPECT_TRUE(has_gpu(r, 0, "gpu-shared", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[0], "gpu-shared", Severity::kInfo)) << "said once for the GPU, not on each row";
  EXPECT_FALSE(has(r.rows[2], "outside-visible-set", Severity::kError));
}

TEST(PsRules, BadDeviceOrderIsAnError) {
  Snapshot s = two_gpus({{7}, {}});
  World w;
  w.add(7, {"CUDA_DEVICE_ORDER=pci_bus_id"});
  PsResult r = ps(s, {}, w);
  EXPECT_TRUE(has(r.rows[0], "device-order-breaks-cuda", Severity::kError));
}

TEST(PsRules, ContainerLayerMakesOutsideSetAWarning) {
  Snapshot s = two_gpus({{}, {8}});
  World w;
  w.add(8, {"CUDA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=1"});
  PsResult r = ps(s, {}, w);
  EXPECT_TRUE(has(r.rows[0], "outside-visible-set", Severity::kWarning));
}

TEST(PsRules, ExitedAndUnreadable) {
  Snapshot s = two_gpus({{5, 6}, {}});
  World w;
  w.add_denied(6, "carol");
  PsResult r = ps(s, {}, w);
  EXPECT_TRUE(has(r.rows[0], "process-exited", Severity::kInfo));
  EXPECT_TRUE(has(r.rows[1], "environ-unreadable", Severity::kInfo));
  EXPECT_FALSE(has_gpu(r, 1, "gpu-shared", Severity::kInfo)) << "an exited pid shares nothing";
}

TEST(PsRules, AZombieIsExitedNotRunningWithAnUnreadableEnvironment) {
  Snapshot s = two_gpus({{9}, {}});
  World w;
  w.add_zombie(9, "dave");
  PsResult r = ps(s, {}, w);
  EXPECT_TRUE(has(r.rows[0], "process-exited", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[0], "environ-unreadable", Severity::kInfo));
}

TEST(PsRules, CudaNumberThatDiffersFromNvidiaSmiIsExplained) {
  Snapshot s = two_gpus({{20}, {21, 22}});
  World w;
  w.add(20, {"CUDA_VISIBLE_DEVICES=1,0"});  // calls GPU 0 cuda:1
  w.add(21, {"CUDA_VISIBLE_DEVICES=1"});    // calls GPU 1 cuda:0
  w.add(22, {});                            // calls GPU 1 cuda:1: the same number
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_TRUE(has(r.rows[0], "cuda-number-differs", Severity::kInfo));
  EXPECT_TRUE(has(r.rows[1], "cuda-number-differs", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[2], "cuda-number-differs", Severity::kInfo));
  for (const Finding& f : r.rows[1].findings)
    if (f.id == "cuda-number-differs") {
      EXPECT_NE(f.message.find("cuda:0"), std::string::npos) << f.message;
      EXPECT_EQ(f.fix, "") << "advice, not a command";
      EXPECT_NE(f.note.find(kU1), std::string::npos) << f.note;
      EXPECT_NE(f.note.find("gpumap map --env CUDA_VISIBLE_DEVICES=1"), std::string::npos) << f.note;
    }
}

TEST(PsRules, RanksOfOneJobOnOneGpuIgnoreLocalRank) {
  // The second field guide: four ranks of one torchrun job, all on GPU 0.
  Snapshot s = two_gpus({{30, 31, 40}, {41}});
  World w;
  for (uint32_t i = 0; i < 2; ++i)
    w.add(30 + i, {"LOCAL_RANK=" + std::to_string(i), "TORCHELASTIC_RUN_ID=job7", "LOCAL_WORLD_SIZE=2"});
  // Two ranks of a job that set their GPUs right: GPU 0 and GPU 1.
  w.add(40, {"LOCAL_RANK=0", "TORCHELASTIC_RUN_ID=ok"});
  w.add(41, {"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=ok"});
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 4u);
  // An error: rank 1's rank-on-wrong-gpu (it sees both GPUs) is folded in as its evidence.
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(has_gpu(r, i, "ranks-share-gpu", Severity::kError)) << i;
  EXPECT_FALSE(has_gpu(r, 2, "ranks-share-gpu", Severity::kWarning));
  EXPECT_FALSE(has_gpu(r, 3, "ranks-share-gpu", Severity::kWarning));
  // One finding for the GPU, naming both pids: not a copy on each row.
  size_t n = 0;
  for (const GpuFinding& g : r.gpu_findings) n += g.finding.id == "ranks-share-gpu";
  EXPECT_EQ(n, 1u);
  for (const ProcessRow& row : r.rows) EXPECT_FALSE(has(row, "ranks-share-gpu", Severity::kWarning)) << row.pid;
  const GpuFinding* f = gpu_finding(r, 0, "ranks-share-gpu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f, gpu_finding(r, 1, "ranks-share-gpu")) << "both rows refer to the same one";
  EXPECT_EQ(f->pids, (std::vector<uint32_t>{30, 31}));
  EXPECT_EQ(f->nvml_index, 0u);
  EXPECT_NE(f->finding.message.find("30 (LOCAL_RANK=0), 31 (LOCAL_RANK=1)"), std::string::npos) << f->finding.message;
  EXPECT_EQ(f->finding.fix, "") << "the fix is in the program: a note";
  EXPECT_NE(f->finding.note.find("torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))"), std::string::npos) << f->finding.note;
  // Ranks that each see a single GPU cannot pick another: the advice is per-rank visibility (srun-style).
  Snapshot one = two_gpus({{50, 51, 52, 53}, {}});
  World w1;
  for (uint32_t i = 0; i < 4; ++i)
    w1.add(50 + i, {"SLURM_LOCALID=" + std::to_string(i), "SLURM_JOB_ID=9", "SLURM_STEP_ID=0", "CUDA_VISIBLE_DEVICES=0"});
  PsResult r1 = ps(one, {}, w1);
  ASSERT_TRUE(has_gpu(r1, 0, "ranks-share-gpu", Severity::kWarning));
  const GpuFinding* f1 = gpu_finding(r1, 0, "ranks-share-gpu");
  EXPECT_EQ(f1->pids, (std::vector<uint32_t>{50, 51, 52, 53}));
  EXPECT_NE(f1->finding.note.find("gpumap bind -- <your command>"), std::string::npos) << f1->finding.note;
  // Four ranks, one GPU each can see: the launcher's count is the fix (issue 52), Slurm's here.
  EXPECT_NE(f1->finding.note.find("srun --ntasks-per-node=1"), std::string::npos) << f1->finding.note;
  // Four processes on one GPU: one gpu-shared and one ranks-share-gpu in all, every row referring to both.
  size_t shared = 0;
  for (const GpuFinding& g : r1.gpu_findings) shared += g.finding.id == "gpu-shared";
  EXPECT_EQ(shared, 1u);
  EXPECT_EQ(r1.gpu_findings.size(), 2u);
  for (const ProcessRow& row : r1.rows) EXPECT_EQ(row.gpu_findings.size(), 2u) << row.pid;
}

const Finding* find(const ProcessRow& r, const std::string& id) {
  for (const Finding& f : r.findings)
    if (f.id == id) return &f;
  return nullptr;
}

size_t count(const PsResult& r, uint32_t pid, const std::string& id) {
  size_t n = 0;
  for (const ProcessRow& row : r.rows)
    if (row.pid == pid) n += find(row, id) != nullptr;
  return n;
}

TEST(PsRules, ARankThatSeesItsGpuButWorksOnAnotherIsOnTheWrongGpu) {
  // The second field guide (§4.1): torchrun ranks that all use cuda:0.
  Snapshot s = two_gpus({{30, 31, 32}, {}});
  World w;
  w.add(30, {"LOCAL_RANK=0", "TORCHELASTIC_RUN_ID=j"});
  w.add(31, {"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=j"});
  w.add(32, {"LOCAL_RANK=0", "CUDA_VISIBLE_DEVICES=1,0"});  // its cuda:0 is GPU 1; it sits on GPU 0 = its cuda:1
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(find(r.rows[0], "rank-on-wrong-gpu"), nullptr) << "rank 0 on cuda:0 is where it belongs";
  // Rank 1 of job j shares GPU 0 with rank 0: one cause (it ignores its local rank), said once, as
  // ranks-share-gpu with rank 1's rank-on-wrong-gpu as its evidence (issue 52 item 7).
  EXPECT_EQ(find(r.rows[1], "rank-on-wrong-gpu"), nullptr) << "folded into the GPU's ranks-share-gpu";
  ASSERT_TRUE(has_gpu(r, 1, "ranks-share-gpu", Severity::kError)) << "the cause, with the worse severity";
  const GpuFinding* shared = gpu_finding(r, 1, "ranks-share-gpu");
  EXPECT_EQ(shared->pids, (std::vector<uint32_t>{30, 31}));
  ASSERT_EQ(shared->finding.also.size(), 1u);
  EXPECT_EQ(shared->finding.also[0].id, "rank-on-wrong-gpu");
  const std::string& f = shared->finding.also[0].message;
  EXPECT_EQ(f, "pid 31 (alice), LOCAL_RANK=1: works on nvidia-smi GPU 0, while its own GPU, cuda:1, is nvidia-smi GPU 1");
  EXPECT_EQ(shared->finding.fix, "") << "prose is not a fix to paste";
  EXPECT_NE(shared->finding.note.find("torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))"), std::string::npos)
      << shared->finding.note;

  // Rank 32 is alone in its job: its rank-on-wrong-gpu is its own finding.
  const Finding* g = find(r.rows[2], "rank-on-wrong-gpu");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->message.find("nvidia-smi GPU 0 (" + std::string(kU0) + "), its cuda:1"), std::string::npos) << g->message;
  EXPECT_NE(g->message.find("its cuda:0 is nvidia-smi GPU 1"), std::string::npos) << g->message;
}

TEST(PsRules, ARankNarrowedToOneGpuIsNotOnTheWrongGpu) {
  // gpumap bind and Slurm's per-task binding leave each rank one GPU: cuda:0, whatever its rank.
  Snapshot s = two_gpus({{40}, {41}});
  World w;
  w.add(40, {"SLURM_LOCALID=1", "SLURM_JOB_ID=3", "CUDA_VISIBLE_DEVICES=0"});
  w.add(41, {"LOCAL_RANK=1", std::string("CUDA_VISIBLE_DEVICES=") + kU1, std::string("GPUMAP_BOUND=") + kU1});
  PsResult r = ps(s, {}, w);
  for (const ProcessRow& row : r.rows) {
    EXPECT_EQ(find(row, "rank-on-wrong-gpu"), nullptr) << row.pid;
    EXPECT_EQ(find(row, "stray-context"), nullptr) << row.pid;
  }
}

TEST(PsRules, BindKeepVisibleRotatedListsAreJudgedByTheirOwnGpuFirst) {
  // bind --keep-visible gives rank 1 `1,0`: its own GPU 1 is cuda:0, rank 0's GPU 0 its cuda:1.
  Snapshot s = two_gpus({{61}, {60}});
  World w;
  std::vector<std::string> rotated = {"LOCAL_RANK=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1,0",
                                      "GPUMAP_BOUND=1,0", "GPUMAP_BOUND_OWN=1"};
  w.add(60, rotated);  // on cuda:0, its own GPU: right
  w.add(61, rotated);  // on cuda:1 = cuda:$LOCAL_RANK: rank 0's GPU
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const ProcessRow& row : r.rows) {
    EXPECT_EQ(row.bound_own, std::optional<size_t>(1)) << row.pid;
    EXPECT_EQ(row.rank_nvml_index, std::optional<uint32_t>(1)) << "its own GPU is its cuda:0, GPU 1";
  }
  EXPECT_EQ(count(r, 60, "rank-on-wrong-gpu"), 0u);
  EXPECT_EQ(count(r, 60, "stray-context"), 0u);
  ASSERT_EQ(count(r, 61, "rank-on-wrong-gpu"), 1u);
  for (const ProcessRow& row : r.rows)
    if (const Finding* f = find(row, "rank-on-wrong-gpu")) {
      EXPECT_NE(f->message.find("its own GPU, cuda:0"), std::string::npos) << f->message;
      EXPECT_NE(f->note.find("use cuda:0"), std::string::npos) << f->note;
    }
  // The same list without bind's markers is a hand-made one: cuda:{rank} is the rank's GPU.
  World plain;
  plain.add(60, {"LOCAL_RANK=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1,0", "GPUMAP_BOUND_OWN=1"});
  plain.add(61, {"LOCAL_RANK=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1,0", "GPUMAP_BOUND=0",
                 "GPUMAP_BOUND_OWN=1"});
  PsResult q = ps(s, {}, plain);
  EXPECT_EQ(count(q, 60, "rank-on-wrong-gpu"), 1u);
  EXPECT_EQ(count(q, 61, "rank-on-wrong-gpu"), 0u);
}

TEST(PsRules, ARankBoundToTwoGpusWorkingOnBothIsFine) {
  // bind --gpus-per-rank 2 gives rank 1 both GPUs of this host (`1,0` after a rotation, or the
  // slice): it works on cuda:0 and cuda:1, both its own.
  Snapshot s = two_gpus({{70}, {70}});
  World w;
  w.add(70, {"LOCAL_RANK=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0,1", "GPUMAP_BOUND=0,1"});
  PsResult r = ps(s, {}, w);
  EXPECT_EQ(count(r, 70, "stray-context"), 0u);
  EXPECT_EQ(count(r, 70, "rank-on-wrong-gpu"), 0u);
}

TEST(PsRules, ARankOnItsGpuAndAnotherHasAStrayContextOnce) {
  // Rank 1 works on GPU 1 (its cuda:1) but touched cuda:0 before set_device (§4.2).
  Snapshot s = two_gpus({{50}, {50, 51}});
  (*s.gpus[0].processes)[0].used_memory_mib = 500;
  World w;
  w.add(50, {"LOCAL_RANK=1"});
  w.add(51, {"LOCAL_RANK=1", "CUDA_VISIBLE_DEVICES=1,0"});  // rank 1 on GPU 1 = its cuda:0, alone: wrong GPU only
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(count(r, 50, "stray-context"), 1u) << "one finding per process, not per row";
  EXPECT_EQ(count(r, 50, "rank-on-wrong-gpu"), 0u);
  const Finding* f = find(r.rows[0], "stray-context");  // on the row of the GPU that is not its own
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  for (const char* part : {"pid 50", "LOCAL_RANK=1", "its cuda:1 is nvidia-smi GPU 1", "256 MiB",
                           "nvidia-smi GPU 0 (", "its cuda:0 (500 MiB)", "before torch.cuda.set_device"})
    EXPECT_NE(f->message.find(part), std::string::npos) << part << " in " << f->message;
  EXPECT_EQ(f->fix, "");
  EXPECT_EQ(count(r, 51, "rank-on-wrong-gpu"), 1u);
  EXPECT_EQ(count(r, 51, "stray-context"), 0u);
}

TEST(PsRules, TorchrunRanksThatHardCodeCudaZeroAreOneFinding) {
  // Issue 52 item 7: four ranks of one torchrun job, all on cuda:0 = GPU 0 of two.  One cause, one
  // finding on the GPU; each misplaced rank's rank-on-wrong-gpu is its evidence, not a second finding.
  Snapshot s = two_gpus({{30, 31, 32, 33}, {}});
  World w;
  for (uint32_t i = 0; i < 4; ++i) w.add(30 + i, {"LOCAL_RANK=" + std::to_string(i % 2), "TORCHELASTIC_RUN_ID=j"});
  PsResult r = ps(s, {}, w);
  for (const ProcessRow& row : r.rows) {
    EXPECT_EQ(find(row, "rank-on-wrong-gpu"), nullptr) << row.pid;
    EXPECT_TRUE(row.findings.empty()) << row.pid << ": " << row.findings.front().id;
  }
  size_t causes = 0;
  for (const GpuFinding& g : r.gpu_findings)
    if (g.finding.id == "ranks-share-gpu") {
      ++causes;
      EXPECT_EQ(g.finding.severity, Severity::kError);
      ASSERT_EQ(g.finding.also.size(), 2u) << "pids 31 and 33 (LOCAL_RANK=1) on rank 0's GPU";
      for (const FoldedFinding& a : g.finding.also) EXPECT_EQ(a.id, "rank-on-wrong-gpu");
    }
  EXPECT_EQ(causes, 1u);
}

TEST(PsRules, AStrayContextOnAnotherRanksGpuIsNotRanksThatShareIt) {
  // Issue 52 item 7: rank 1 works on its own GPU 1 and left a context on GPU 0, where rank 0
  // works.  stray-context ("works on its own GPU") is the cause; ranks-share-gpu ("ignores its
  // local rank") would contradict it: its sharing is evidence under the stray context.
  Snapshot s = two_gpus({{40, 41}, {41}});
  (*s.gpus[0].processes)[1].used_memory_mib = 500;
  World w;
  w.add(40, {"LOCAL_RANK=0", "TORCHELASTIC_RUN_ID=j"});
  w.add(41, {"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=j"});
  PsResult r = ps(s, {}, w);
  for (const GpuFinding& g : r.gpu_findings) EXPECT_NE(g.finding.id, "ranks-share-gpu") << g.finding.message;
  ASSERT_EQ(count(r, 41, "stray-context"), 1u);
  EXPECT_EQ(count(r, 40, "stray-context"), 0u);
  for (const ProcessRow& row : r.rows)
    if (const Finding* f = find(row, "stray-context")) {
      ASSERT_EQ(f->also.size(), 1u);
      EXPECT_EQ(f->also[0].id, "ranks-share-gpu");
      EXPECT_NE(f->also[0].message.find("shares nvidia-smi GPU 0 with pid 40 (LOCAL_RANK=0)"), std::string::npos)
          << f->also[0].message;
      EXPECT_EQ(f->also[0].message.find("ignores"), std::string::npos) << f->also[0].message;
    }
  // A third rank that does ignore its local rank still shares GPU 0 with rank 0: that is said.
  Snapshot s3 = two_gpus({{40, 41, 42}, {41}});
  w.add(42, {"LOCAL_RANK=2", "TORCHELASTIC_RUN_ID=j"});
  (*s3.gpus[0].processes)[1].used_memory_mib = 500;
  PsResult r3 = ps(s3, {}, w);
  const GpuFinding* g = gpu_finding(r3, 0, "ranks-share-gpu");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pids, (std::vector<uint32_t>{40, 42})) << "not the stray context's rank";
  EXPECT_EQ(count(r3, 41, "stray-context"), 1u);
}

// Issue 52 item 2: ranks given on the command line (torch.distributed.launch without --use-env)
// are grouped as ranks: two on one GPU are ranks-share-gpu, with advice in argparse's terms.
TEST(PsRules, RanksGivenOnTheCommandLineAreRanks) {
  Snapshot s = two_gpus({{30, 31}, {}});
  World w;
  for (uint32_t i = 0; i < 2; ++i) {
    w.add(30 + i, {"MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500", "WORLD_SIZE=2", "RANK=" + std::to_string(i)});
    w.procs[30 + i].argv = i == 0 ? std::vector<std::string>{"python3", "-u", "train.py", "--local_rank=0"}
                                  : std::vector<std::string>{"python3", "-u", "train.py", "--local-rank", "1"};
    w.procs[30 + i].ppid = 10;
  }
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].rank_variable, "--local_rank");
  EXPECT_EQ(r.rows[1].rank_variable, "--local-rank");
  EXPECT_EQ(r.rows[1].rank, std::optional<uint32_t>(1));
  const GpuFinding* g = gpu_finding(r, 0, "ranks-share-gpu");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pids, (std::vector<uint32_t>{30, 31}));
  EXPECT_NE(g->finding.message.find("31 (--local-rank=1)"), std::string::npos) << g->finding.message;
  EXPECT_NE(g->finding.note.find("torch.cuda.set_device(args.local_rank)"), std::string::npos) << g->finding.note;
  ASSERT_EQ(g->finding.also.size(), 1u) << "rank 1's rank-on-wrong-gpu is its evidence";
  EXPECT_EQ(g->finding.also[0].id, "rank-on-wrong-gpu");
  EXPECT_FALSE(argv_local_rank({"python3", "train.py", "--local_rank", "x"}));
  EXPECT_FALSE(argv_local_rank({"python3", "train.py", "--lr=1"}));
}

// Issue 52 item 2: torch.multiprocessing.spawn's workers carry no rank variable: children of one
// parent with spawn's command line are ranks in start order, so a stray context on GPU 0 is said.
TEST(PsRules, SpawnWorkersAreRanksInStartOrder) {
  Snapshot s = two_gpus({{20, 21}, {21}});
  (*s.gpus[0].processes)[0].used_memory_mib = 2000;
  (*s.gpus[0].processes)[1].used_memory_mib = 300;
  World w;
  for (uint32_t i = 0; i < 2; ++i) {
    w.add(20 + i, {"MASTER_ADDR=localhost", "MASTER_PORT=12355"});
    w.procs[20 + i].argv = std::vector<std::string>{
        "/usr/bin/python3", "-c",
        "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=" + std::to_string(7 + 2 * i) + ")",
        "--multiprocessing-fork"};
    w.procs[20 + i].ppid = 10;
    w.procs[20 + i].start_ticks = 500 + i;
  }
  PsResult r = ps(s, {}, w);
  for (const ProcessRow& row : r.rows) {
    EXPECT_EQ(row.rank_variable, kSpawnRank) << row.pid;
    EXPECT_EQ(row.rank, std::optional<uint32_t>(row.pid - 20)) << row.pid;
  }
  EXPECT_EQ(count(r, 21, "stray-context"), 1u);
  EXPECT_EQ(count(r, 20, "stray-context"), 0u);
  for (const GpuFinding& g : r.gpu_findings) EXPECT_NE(g.finding.id, "ranks-share-gpu") << g.finding.message;
  for (const ProcessRow& row : r.rows)
    if (const Finding* f = find(row, "stray-context")) {
      EXPECT_NE(f->message.find("mp.spawn rank=1"), std::string::npos) << f->message;
      EXPECT_NE(f->note.find("torch.cuda.set_device(rank)"), std::string::npos) << f->note;
    }
  // One worker alone, or two processes of other parents: no rank is made up.
  w.procs[21].ppid = 11;
  PsResult apart = ps(s, {}, w);
  for (const ProcessRow& row : apart.rows) EXPECT_FALSE(row.rank) << row.pid;
}

// Issue 52 item 2: a launcher set the worker's CUDA_VISIBLE_DEVICES (its parent started with
// another): the fix is the launcher's own knob, named with the parent, not an export in the
// worker's shell.  A shell's `CUDA_VISIBLE_DEVICES=1 cmd` is no launcher: nothing said.
TEST(PsRules, ALauncherThatSetTheVariableIsNamedWithItsKnob) {
  Snapshot s = two_gpus({{}, {41, 51}});
  World w;
  w.add(40, {"CUDA_VISIBLE_DEVICES=0,1"});
  w.procs[40].argv = std::vector<std::string>{"/usr/bin/python3", "-u", "-m", "deepspeed.launcher.launch",
                                              "--world_info=eyJsb2NhbGhvc3QiOiBbMV19", "train.py"};
  w.add(41, {"CUDA_VISIBLE_DEVICES=1", "LOCAL_RANK=0"});
  w.procs[41].ppid = 40;
  w.add(50, {"HOME=/root"});
  w.procs[50].argv = std::vector<std::string>{"-bash"};
  w.add(51, {"CUDA_VISIBLE_DEVICES=1"});
  w.procs[51].ppid = 50;
  PsResult r = ps(s, {}, w);
  ASSERT_EQ(r.rows.size(), 2u);
  const Finding* f = find(r.rows[0], "launcher-set-visible-devices");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning) << "the value the launcher was given was replaced";
  for (const char* part : {"pid 41", "CUDA_VISIBLE_DEVICES=`1`", "parent pid 40 (", "deepspeed.launcher.launch", "`0,1`",
                           "DeepSpeed's launcher replaced the value it was given"})
    EXPECT_NE(f->message.find(part), std::string::npos) << part << " in " << f->message;
  EXPECT_EQ(f->fix, "") << "never an export in the worker's shell";
  EXPECT_NE(f->note.find("deepspeed --include localhost:<GPUs>"), std::string::npos) << f->note;
  EXPECT_EQ(find(r.rows[1], "launcher-set-visible-devices"), nullptr) << "a shell is no launcher";
  // The other launchers, by their command lines.
  for (const auto& [argv, knob] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"/opt/venv/bin/accelerate", "launch", "--multi_gpu", "train.py"}, "accelerate launch --gpu_ids <GPUs>"},
           {{"/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--tensor-parallel-size", "2"}, "--device-ids <GPUs>"},
           {{"/opt/ray/core/src/ray/raylet/raylet", "--raylet_socket_name=x"}, "num_gpus=N"}}) {
    w.procs[40].argv = argv;
    PsResult q = ps(s, {}, w);
    const Finding* g = find(q.rows[0], "launcher-set-visible-devices");
    ASSERT_NE(g, nullptr) << argv[0];
    EXPECT_NE(g->note.find(knob), std::string::npos) << g->note;
  }
  // A launcher started without the variable chose the GPUs itself: said, as information.
  w.procs[40].argv = std::vector<std::string>{"/usr/bin/python3", "-u", "-m", "deepspeed.launcher.launch", "train.py"};
  w.procs[40].environ = std::vector<std::string>{"HOME=/root"};
  PsResult chose = ps(s, {}, w);
  const Finding* c = find(chose.rows[0], "launcher-set-visible-devices");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->severity, Severity::kInfo);
  EXPECT_NE(c->message.find("DeepSpeed's launcher set it"), std::string::npos) << c->message;
  // The same value as the launcher's own: it passed it on, nothing to say.
  w.procs[40].environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1"};
  PsResult same = ps(s, {}, w);
  EXPECT_EQ(find(same.rows[0], "launcher-set-visible-devices"), nullptr);
}

TEST(PsRules, NoRankCheckWhereTheEnvironmentIsNotWhatCudaUses) {
  // On a GPU its starting CUDA_VISIBLE_DEVICES excludes: outside-visible-set explains; its cuda:N are unknown.
  Snapshot s = two_gpus({{60}, {}});
  World w;
  w.add(60, {"LOCAL_RANK=1", "CUDA_VISIBLE_DEVICES=1"});
  w.add(61, {"LOCAL_RANK=1", "CUDA_DEVICE_ORDER=pci"});
  PsResult r = ps(s, {}, w);
  EXPECT_NE(find(r.rows[0], "outside-visible-set"), nullptr);
  EXPECT_EQ(find(r.rows[0], "rank-on-wrong-gpu"), nullptr);
  Snapshot s2 = two_gpus({{61}, {}});
  PsResult r2 = ps(s2, {}, w);
  EXPECT_EQ(find(r2.rows[0], "rank-on-wrong-gpu"), nullptr) << "cuInit fails under its environment";
}

TEST(PsRules, NotJoinableRowsSaySo) {
  Snapshot s = two_gpus({{4242}, {}});
  World w;
  w.add(4242, {"CUDA_VISIBLE_DEVICES=0"});  // a different process that happens to have that number
  PidNamespaceView ns;
  ns.joinable = false;
  PsResult r = ps(s, ns, w);
  EXPECT_TRUE(has(r.rows[0], "process-not-visible", Severity::kWarning));
}

// Issue 30.6: advice about another process never exports in the shell `gpumap ps` runs in.  Where
// a line helps it starts that process again (its arguments quoted for the shell), else a note.
TEST(PsRules, AdviceForAnotherProcessIsARelaunchLineNeverAnExport) {
  World w;
  Snapshot s = four_processes(w);
  w.procs[103].argv = std::vector<std::string>{"python3", "train.py", "--name", "my run's 1st"};
  w.add(104, {"CUDA_DEVICE_ORDER=pci_bus_id"});
  s.gpus[0].processes->push_back({104, 256, "compute"});
  PsResult r = ps(s, {}, w);
  auto all = [&] {
    std::vector<Finding> fs;
    for (const ProcessRow& row : r.rows) fs.insert(fs.end(), row.findings.begin(), row.findings.end());
    for (const GpuFinding& g : r.gpu_findings) fs.push_back(g.finding);
    return fs;
  }();
  for (const Finding& f : all) {
    EXPECT_EQ(f.fix.find("export"), std::string::npos) << f.id << ": " << f.fix;
    EXPECT_EQ(f.note.find("export"), std::string::npos) << f.id << ": " << f.note;
  }
  size_t row103 = 0;
  for (size_t i = 0; i < r.rows.size(); ++i)
    if (r.rows[i].pid == 103) row103 = i;
  const GpuFinding* unpinned = gpu_finding(r, row103, "no-visibility-shared-host");
  ASSERT_TRUE(unpinned);
  EXPECT_EQ(unpinned->finding.fix, std::string("CUDA_VISIBLE_DEVICES=") + kU1 + " python3 train.py --name 'my run'\\''s 1st'");
  // outside-visible-set: the GPU it holds is the mistake; no fix, and the note names its environment's GPU.
  bool outside = false;
  for (const ProcessRow& row : r.rows)
    for (const Finding& f : row.findings)
    if (row.pid == 101 && f.id == "outside-visible-set") {
      outside = true;
      EXPECT_EQ(f.fix, "");
      EXPECT_NE(f.note.find(std::string("start it again as: CUDA_VISIBLE_DEVICES=") + kU1 + " python3 train.py"),
                std::string::npos) << f.note;
      EXPECT_EQ(f.note.find(std::string("CUDA_VISIBLE_DEVICES=") + kU0), std::string::npos) << f.note;
    }
  EXPECT_TRUE(outside);
  bool order = false;
  for (const ProcessRow& row : r.rows)
    for (const Finding& f : row.findings)
      if (f.id == "device-order-breaks-cuda") {
        order = true;
        EXPECT_EQ(f.fix, "CUDA_DEVICE_ORDER=PCI_BUS_ID python3 train.py");
      }
  EXPECT_TRUE(order);
  // A process whose arguments are unknown (a kernel thread) or hold a line break: a note, no fix.
  World w2;
  Snapshot s2 = two_gpus({{}, {7}});
  w2.add(7, {"CUDA_DEVICE_ORDER=garbage"});
  w2.procs[7].argv = std::vector<std::string>{"python3", "-c", "a\nb"};
  PsResult r2 = ps(s2, {}, w2);
  ASSERT_FALSE(r2.rows[0].findings.empty());
  EXPECT_EQ(r2.rows[0].findings[0].id, "device-order-breaks-cuda");
  EXPECT_EQ(r2.rows[0].findings[0].fix, "");
  EXPECT_NE(r2.rows[0].findings[0].note.find("CUDA_DEVICE_ORDER=PCI_BUS_ID python3"), std::string::npos);
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

using namespace testing_ps;

// Pods on the two GPUs: each row's pod as name_pods leaves it (resolve/pod_join_test.cc tests that).
PodRef pod(const std::string& uid, const std::string& name, std::vector<std::string> allocated,
           std::vector<std::string> shared = {}, bool known = true) {
  PodRef p;
  p.uid = uid;
  p.name = name;
  p.ns = name.empty() ? "" : "ml";
  p.container = name.empty() ? "" : "main";
  p.allocated = std::move(allocated);
  p.shared = std::move(shared);
  p.allocation_known = known;
  return p;
}

PsResult in_pods(const Snapshot& s, World& w, const std::vector<PodRef>& pods) {
  PsResult r = join_ps(s, {}, w.reader(), w.viewer());
  for (size_t i = 0; i < r.rows.size() && i < pods.size(); ++i) r.rows[i].pod = pods[i];
  add_ps_findings(s, {}, r);
  return r;
}

Snapshot two_on_gpu0(World& w) {
  w.add(100, {"CUDA_VISIBLE_DEVICES=0"});
  w.add(101, {"CUDA_VISIBLE_DEVICES=0"});
  return two_gpus({{100, 101}, {}});
}

TEST(PodRules, TwoPodsOnOneGpuOnlyOneWasGiven) {
  World w;
  Snapshot s = two_on_gpu0(w);
  PsResult r = in_pods(s, w, {pod("u1", "a", {kU0}), pod("u2", "b", {kU1})});
  const GpuFinding* g = gpu_finding(r, 0, "pod-gpu-shared");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->finding.severity, Severity::kWarning);
  EXPECT_EQ(g->pids, (std::vector<uint32_t>{100, 101}));
  EXPECT_NE(g->finding.message.find("ml/a (pid 100), ml/b (pid 101); only ml/a was allocated it"), std::string::npos)
      << g->finding.message;
  EXPECT_TRUE(g->finding.fix.empty()) << "what to change is in the pod spec or the node, never the shell";
  EXPECT_TRUE(has(r.rows[1], "pod-gpu-outside-allocation", Severity::kWarning));
  EXPECT_FALSE(has(r.rows[0], "pod-gpu-outside-allocation", Severity::kWarning));
}

TEST(PodRules, ReplicasAndDifferentMigDevicesExplainTwoPodsOnOneGpu) {
  World w;
  Snapshot s = two_on_gpu0(w);
  const std::string mig_a = "MIG-aaaaaaaa-0000-0000-0000-000000000001", mig_b = "MIG-aaaaaaaa-0000-0000-0000-000000000002";
  s.gpus[0].mig_devices = {{mig_a, "NVIDIA H200 MIG 1g.18gb", 1, 0, 18000, 0}, {mig_b, "NVIDIA H200 MIG 1g.18gb", 2, 0, 18000, 0}};
  EXPECT_EQ(gpu_finding(in_pods(s, w, {pod("u1", "a", {kU0}, {kU0}), pod("u2", "b", {kU0}, {kU0})}), 0, "pod-gpu-shared"),
            nullptr)
      << "time-slicing replicas of GPU 0 to both";
  EXPECT_EQ(gpu_finding(in_pods(s, w, {pod("u1", "a", {mig_a}), pod("u2", "b", {mig_b})}), 0, "pod-gpu-shared"), nullptr)
      << "two MIG devices of one GPU";
  PodRef c1 = pod("u1", "a", {kU0}), c2 = pod("u2", "b", {kU0});
  c1.claimed = c2.claimed = {kU0};
  EXPECT_EQ(gpu_finding(in_pods(s, w, {c1, c2}), 0, "pod-gpu-shared"), nullptr) << "one DRA claim shared by both";
  // The same MIG device to both without replicas; a replica to one only; the whole GPU and a MIG device of it.
  for (const auto& pods : std::vector<std::vector<PodRef>>{{pod("u1", "a", {mig_a}), pod("u2", "b", {mig_a})},
                                                           {pod("u1", "a", {kU0}, {kU0}), pod("u2", "b", {kU0})},
                                                           {pod("u1", "a", {kU0}), pod("u2", "b", {mig_b})}}) {
    PsResult r = in_pods(s, w, pods);  // (kept: the finding points into it)
    const GpuFinding* g = gpu_finding(r, 0, "pod-gpu-shared");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->finding.severity, Severity::kWarning);
  }
  PsResult both = in_pods(s, w, {pod("u1", "a", {kU0}), pod("u2", "b", {kU0})});
  const GpuFinding* twice = gpu_finding(both, 0, "pod-gpu-shared");
  ASSERT_NE(twice, nullptr);
  EXPECT_NE(twice->finding.message.find("the kubelet gave it to ml/a and ml/b without a time-slicing or MPS share"),
            std::string::npos)
      << twice->finding.message;
}

TEST(PodRules, WithoutTheKubeletTwoPodsOnOneGpuIsInfoAndOnePodIsNothing) {
  World w;
  Snapshot s = two_on_gpu0(w);
  PsResult r = in_pods(s, w, {pod("u1", "", {}, {}, false), pod("u2", "", {}, {}, false)});
  EXPECT_TRUE(has_gpu(r, 0, "pod-gpu-shared", Severity::kInfo));
  EXPECT_NE(gpu_finding(r, 0, "pod-gpu-shared")->finding.message.find("u1 (pid 100), u2 (pid 101)"), std::string::npos);
  PsResult one = in_pods(s, w, {pod("u1", "a", {kU0}), pod("u1", "a", {kU0})});
  EXPECT_EQ(gpu_finding(one, 0, "pod-gpu-shared"), nullptr) << "two processes of one pod";
}

TEST(PodRules, AContainerWhoseVariableNamesMoreThanItsAllocation) {
  World w;
  w.add(100, {"NVIDIA_VISIBLE_DEVICES=all"});
  w.add(102, {"NVIDIA_VISIBLE_DEVICES=void"});
  Snapshot s = two_gpus({{100}, {102}});
  PodRef sees_all = pod("u1", "a", {kU0});
  sees_all.visible = std::vector<std::string>{kU0, kU1};
  PodRef cdi = pod("u2", "b", {kU1});  // void: no visible set to judge
  PsResult r = in_pods(s, w, {sees_all, cdi});
  ASSERT_TRUE(has(r.rows[0], "pod-sees-unallocated-gpu", Severity::kWarning));
  for (const Finding& f : r.rows[0].findings)
    if (f.id == "pod-sees-unallocated-gpu") {
      EXPECT_NE(f.message.find("NVIDIA_VISIBLE_DEVICES=`all`, which gives it nvidia-smi GPU 1: not allocated"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("its container was given nvidia-smi GPU 0)"), std::string::npos) << f.message;
      EXPECT_TRUE(f.fix.empty());
    }
  EXPECT_FALSE(has(r.rows[0], "pod-gpu-outside-allocation", Severity::kWarning)) << "it uses only what it was given";
  EXPECT_FALSE(has(r.rows[1], "pod-sees-unallocated-gpu", Severity::kWarning));
  // A MIG device's container that sees its whole GPU sees more than it was given.
  const std::string mig = "MIG-aaaaaaaa-0000-0000-0000-000000000001";
  s.gpus[0].mig_devices = {{mig, "NVIDIA H200 MIG 1g.18gb", 1, 0, 18000, 0}};
  PodRef whole = pod("u1", "a", {mig});
  whole.visible = std::vector<std::string>{kU0};
  EXPECT_TRUE(has(in_pods(s, w, {whole}).rows[0], "pod-sees-unallocated-gpu", Severity::kWarning));
  PodRef exact = pod("u1", "a", {kU0});
  exact.visible = std::vector<std::string>{mig};
  EXPECT_FALSE(has(in_pods(s, w, {exact}).rows[0], "pod-sees-unallocated-gpu", Severity::kWarning));
}

}  // namespace
}  // namespace gpumap
