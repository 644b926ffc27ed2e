#include "resolve/process_view.h"

#include <gtest/gtest.h>

#include "resolve/mapping.h"

namespace gpumap {
namespace {

const char* kU0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kU1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

Snapshot two_gpus(std::vector<std::vector<uint32_t>> pids) {
  Snapshot s;
  for (uint32_t i = 0; i < 2; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = i ? kU1 : kU0;
    g.name = "NVIDIA H200";
    g.pci_bus_id = i ? "00000000:00:07.0" : "00000000:00:06.0";
    g.processes.emplace();
    for (uint32_t p : pids[i]) g.processes->push_back({p, 256, "compute"});
    s.gpus.push_back(g);
  }
  return s;
}

struct World {
  std::map<uint32_t, ProcProcess> procs;
  int views = 0;
  void add(uint32_t pid, std::vector<std::string> env, std::string user = "alice") {
    ProcProcess p;
    p.pid = pid;
    p.user = user;
    p.command = "python3 train.py";
    p.environ = std::move(env);
    p.environ_access = ProcAccess::kOk;
    p.nspid = std::vector<uint32_t>{pid};
    procs[pid] = p;
  }
  ReadProc reader() {
    return [this](uint32_t pid) {
      auto it = procs.find(pid);
      if (it != procs.end()) return it->second;
      ProcProcess gone;
      gone.pid = pid;
      gone.access = ProcAccess::kGone;
      return gone;
    };
  }
  ViewOf viewer() {
    return [this](const Environment& e) {
      ++views;
      return predict_cuda_view({kU0, kU1}, e.get("CUDA_DEVICE_ORDER"), e.get("CUDA_VISIBLE_DEVICES"));
    };
  }
};

bool has(const ProcessRow& r, const std::string& id, Severity sev) {
  for (const Finding& f : r.findings)
    if (f.id == id && f.severity == sev) return true;
  return false;
}

TEST(PsView, EachProcessGetsItsOwnOrdinal) {
  Snapshot s = two_gpus({{100, 101}, {102, 103}});
  World w;
  w.add(100, {"CUDA_VISIBLE_DEVICES=1,0"});
  w.add(101, {"CUDA_VISIBLE_DEVICES=1"});  // GPU 0 is outside its set
  w.add(102, {std::string("CUDA_VISIBLE_DEVICES=") + kU1});
  w.add(103, {}, "bob");
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].ordinal, 1);
  EXPECT_FALSE(r.rows[1].ordinal);
  EXPECT_TRUE(has(r.rows[1], "outside-visible-set", Severity::kError));
  EXPECT_EQ(r.rows[2].ordinal, 0);
  EXPECT_EQ(r.rows[3].ordinal, 1);
  EXPECT_TRUE(has(r.rows[3], "no-visibility-shared-host", Severity::kInfo));
  EXPECT_TRUE(has(r.rows[0], "gpu-shared", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[2], "outside-visible-set", Severity::kError));
  EXPECT_EQ(r.rows[2].local_pid, 102u);
}

TEST(PsView, MappingIsCachedPerDistinctPair) {
  std::vector<uint32_t> many;
  for (uint32_t p = 1000; p < 11000; ++p) many.push_back(p);
  Snapshot s = two_gpus({many, {}});
  World w;
  for (uint32_t p : many) w.add(p, {p % 2 ? "CUDA_VISIBLE_DEVICES=0" : "CUDA_VISIBLE_DEVICES=1,0", "HOME=/x"});
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows.size(), 10000u);
  EXPECT_EQ(w.views, 2);
  EXPECT_EQ(r.distinct_views, 2u);
}

TEST(PsView, BadDeviceOrderIsAnError) {
  Snapshot s = two_gpus({{7}, {}});
  World w;
  w.add(7, {"CUDA_DEVICE_ORDER=pci_bus_id"});
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  EXPECT_TRUE(has(r.rows[0], "device-order-breaks-cuda", Severity::kError));
  EXPECT_EQ(r.rows[0].cuda_error, "CUDA_ERROR_INVALID_DEVICE");
  EXPECT_FALSE(r.rows[0].ordinal);
}

TEST(PsView, ContainerLayerMakesOutsideSetAWarning) {
  Snapshot s = two_gpus({{}, {8}});
  World w;
  w.add(8, {"CUDA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=1"});
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  EXPECT_TRUE(has(r.rows[0], "outside-visible-set", Severity::kWarning));
}

TEST(PsView, ExitedAndUnreadable) {
  Snapshot s = two_gpus({{5, 6}, {}});
  World w;
  ProcProcess denied;
  denied.pid = 6;
  denied.user = "carol";
  denied.environ_access = ProcAccess::kDenied;
  denied.environ_error = "Permission denied";
  w.procs[6] = denied;
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].state, ProcessState::kExited);
  EXPECT_TRUE(has(r.rows[0], "process-exited", Severity::kInfo));
  EXPECT_EQ(r.rows[1].state, ProcessState::kRunning);
  EXPECT_FALSE(r.rows[1].environ_known);
  EXPECT_FALSE(r.rows[1].ordinal);
  EXPECT_TRUE(has(r.rows[1], "environ-unreadable", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[1], "gpu-shared", Severity::kInfo)) << "an exited pid shares nothing";
}

TEST(PsView, AZombieIsExitedNotRunningWithAnUnreadableEnvironment) {
  Snapshot s = two_gpus({{9}, {}});
  World w;
  ProcProcess z;
  z.pid = 9;
  z.user = "dave";
  z.zombie = true;  // status "State: Z (zombie)"; its environ reads empty
  z.environ_access = ProcAccess::kError;
  w.procs[9] = z;
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].state, ProcessState::kExited);
  EXPECT_TRUE(has(r.rows[0], "process-exited", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[0], "environ-unreadable", Severity::kInfo));
}

TEST(PsView, UnlistedGpu) {
  Snapshot s = two_gpus({{}, {}});
  s.gpus[1].processes.reset();
  World w;
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  EXPECT_EQ(r.unlisted_gpus, std::vector<uint32_t>{1});
}

TEST(PsView, CudaNumberThatDiffersFromNvidiaSmiIsExplained) {
  Snapshot s = two_gpus({{20}, {21, 22}});
  World w;
  w.add(20, {"CUDA_VISIBLE_DEVICES=1,0"});  // calls GPU 0 cuda:1
  w.add(21, {"CUDA_VISIBLE_DEVICES=1"});    // calls GPU 1 cuda:0
  w.add(22, {});                            // calls GPU 1 cuda:1: the same number
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_TRUE(has(r.rows[0], "cuda-number-differs", Severity::kInfo));
  EXPECT_TRUE(has(r.rows[1], "cuda-number-differs", Severity::kInfo));
  EXPECT_FALSE(has(r.rows[2], "cuda-number-differs", Severity::kInfo));
  for (const Finding& f : r.rows[1].findings)
    if (f.id == "cuda-number-differs") {
      EXPECT_NE(f.message.find("cuda:0"), std::string::npos) << f.message;
      EXPECT_NE(f.fix.find(kU1), std::string::npos) << f.fix;
      EXPECT_NE(f.fix.find("gpumap map --env CUDA_VISIBLE_DEVICES=1"), std::string::npos) << f.fix;
    }
}

TEST(PsView, RanksOfOneJobOnOneGpuIgnoreLocalRank) {
  // The second field guide: four ranks of one torchrun job, all on GPU 0.
  Snapshot s = two_gpus({{30, 31, 40}, {41}});
  World w;
  for (uint32_t i = 0; i < 2; ++i)
    w.add(30 + i, {"LOCAL_RANK=" + std::to_string(i), "TORCHELASTIC_RUN_ID=job7", "LOCAL_WORLD_SIZE=2"});
  // Two ranks of a job that set their GPUs right: GPU 0 and GPU 1.
  w.add(40, {"LOCAL_RANK=0", "TORCHELASTIC_RUN_ID=ok"});
  w.add(41, {"LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=ok"});
  PsResult r = build_ps(s, {}, w.reader(), w.viewer());
  ASSERT_EQ(r.rows.size(), 4u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(has(r.rows[i], "ranks-share-gpu", Severity::kWarning)) << i;
  EXPECT_FALSE(has(r.rows[2], "ranks-share-gpu", Severity::kWarning));
  EXPECT_FALSE(has(r.rows[3], "ranks-share-gpu", Severity::kWarning));
  for (const Finding& f : r.rows[0].findings)
    if (f.id == "ranks-share-gpu") {
      EXPECT_NE(f.message.find("31 (LOCAL_RANK=1)"), std::string::npos) << f.message;
      EXPECT_NE(f.fix.find("torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))"), std::string::npos) << f.fix;
    }
  // Ranks that each see a single GPU cannot pick another: the fix is per-rank visibility (srun-style).
  Snapshot one = two_gpus({{50, 51, 52, 53}, {}});
  World w1;
  for (uint32_t i = 0; i < 4; ++i)
    w1.add(50 + i, {"SLURM_LOCALID=" + std::to_string(i), "SLURM_JOB_ID=9", "SLURM_STEP_ID=0", "CUDA_VISIBLE_DEVICES=0"});
  PsResult r1 = build_ps(one, {}, w1.reader(), w1.viewer());
  ASSERT_TRUE(has(r1.rows[0], "ranks-share-gpu", Severity::kWarning));
  for (const Finding& f : r1.rows[0].findings)
    if (f.id == "ranks-share-gpu") {
      EXPECT_NE(f.fix.find("gpumap bind"), std::string::npos) << f.fix;
    }
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
  PsResult r = build_ps(s, ns, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].state, ProcessState::kNotVisible);
  EXPECT_FALSE(r.rows[0].command);
  EXPECT_FALSE(r.rows[0].ordinal);
  EXPECT_TRUE(has(r.rows[0], "process-not-visible", Severity::kWarning));
}

TEST(PsPidNamespace, LocalPidFromNspid) {
  Snapshot s = two_gpus({{5563, 900}, {}});
  World w;
  w.add(5563, {});
  w.procs[5563].nspid = std::vector<uint32_t>{5563, 2};
  w.add(900, {});  // lives only in the outer namespace
  PidNamespaceView ns;
  ns.self_level = 1;
  PsResult r = build_ps(s, ns, w.reader(), w.viewer());
  EXPECT_EQ(r.rows[0].local_pid, 2u);
  EXPECT_FALSE(r.rows[1].local_pid);
}

}  // namespace
}  // namespace gpumap
