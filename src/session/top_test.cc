// read_top_frame in process: the frame `gpumap top` draws, on FakeSession hosts.
#include "session/top.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "os/proc.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

FakeSession& two_ranks(FakeSession& f) {
  // torchrun (pid 50, on no GPU) with two ranks; rank 0 set CUDA_VISIBLE_DEVICES=1 yet runs on GPU 0.
  f.with_proc_entry({.pid = 50, .argv = {"torchrun", "--nproc-per-node", "2", "train.py"}});
  f.with_process(0, {.pid = 101, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1", "LOCAL_RANK=0"}, .ppid = 50}, 1000);
  f.with_process(1, {.pid = 102, .environ = std::vector<std::string>{"LOCAL_RANK=1"}, .ppid = 50}, 2000);
  return f;
}

TEST(ReadTopFrame, GpusProcessesTheirCudaNumbersOursAndTheirParents) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  two_ranks(f);
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  ASSERT_TRUE(t.error.empty()) << t.error;
  ASSERT_TRUE(t.snapshot);
  EXPECT_EQ(t.snapshot->gpus.size(), 2u);
  EXPECT_EQ(t.cuda_here, (std::map<std::string, int>{{kH1, 0}}));  // this shell sees GPU 1 as cuda:0
  EXPECT_EQ(t.parents, (std::map<uint32_t, std::string>{{50, "torchrun --nproc-per-node 2 train.py"}}));
  ASSERT_EQ(t.ps.result.rows.size(), 2u);
  const ProcessRow& r0 = t.ps.result.rows[0];
  EXPECT_EQ(r0.pid, 101u);
  EXPECT_EQ(r0.ppid, 50u);
  EXPECT_FALSE(r0.cuda_ordinal);  // GPU 0 is outside its visible set
  bool outside = false;
  for (const Finding& fd : r0.findings) outside |= fd.id == "outside-visible-set";
  EXPECT_TRUE(outside);
  EXPECT_EQ(t.ps.result.rows[1].cuda_ordinal, 1);  // rank 1 sees both: GPU 1 is its cuda:1
  EXPECT_EQ(t.ps.leases.size(), 2u);  // every GPU's lease, not only those with a process
  EXPECT_TRUE(t.ps.leases.count(kH0) && t.ps.leases.count(kH1));
  EXPECT_GT(t.read_unix_ms, 0);
}

TEST(ReadTopFrame, AFailedReadIsAFrameThatSaysWhy) {
  FakeSession f("h200x2");
  f.host()["errors"] = {{"nvmlInit", "NVML_ERROR_DRIVER_NOT_LOADED"}};
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  EXPECT_FALSE(t.snapshot);
  EXPECT_NE(t.error.find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos) << t.error;
}

TEST(ReadTopFrame, AShellWhoseVariableBreaksCudaIsSaid) {
  FakeSession f("h200x2", {"CUDA_DEVICE_ORDER=FASTEST"});  // not a value CUDA accepts
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  ASSERT_TRUE(t.snapshot) << t.error;
  EXPECT_TRUE(t.cuda_here.empty());
  EXPECT_FALSE(t.cuda_here_error.empty());
}

void write(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_TRUE(f) << path;
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

TEST(ReadTopFrame, ACacheReadsAProcessInFullOnlyWhenItIsNewOrExecd) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 101, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0"}});
  std::string dir = f.proc_root() + "/101";
  write(dir + "/stat", "101 (python3 (x)) S 50 101 101 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
  ProcCache cache;
  Session& s = f.session();
  EXPECT_EQ(read_top_frame(s, ProcFs(f.proc_root()), &cache).ps.result.rows[0].cuda_visible_devices, "0");
  ASSERT_EQ(cache.entries.count(101), 1u);
  EXPECT_EQ(cache.entries[101].comm, "python3 (x)");
  EXPECT_EQ(cache.entries[101].start_ticks, 777);
  write(dir + "/environ", std::string("CUDA_VISIBLE_DEVICES=1") + '\0');  // not re-read: the same process
  TopFrame t = read_top_frame(s, ProcFs(f.proc_root()), &cache);
  EXPECT_EQ(t.ps.result.rows[0].cuda_visible_devices, "0");
  EXPECT_EQ(t.ps.result.rows[0].ppid, 50u);  // from stat
  write(dir + "/stat", "101 (torch_worker) S 50 101 101 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");  // exec'd
  EXPECT_EQ(read_top_frame(s, ProcFs(f.proc_root()), &cache).ps.result.rows[0].cuda_visible_devices, "1");
  write(dir + "/stat", "101 (torch_worker) Z 50 101 101 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
  EXPECT_EQ(read_top_frame(s, ProcFs(f.proc_root()), &cache).ps.result.rows[0].state, ProcessState::kExited);
}

TEST(RecordHistory, OneSamplePerReadPerGpuAndGpusThatLeftAreDropped) {
  FakeSession f("h200x2");
  f.host()["gpus"][0]["utilization_gpu"] = 40;
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  TopHistory h;
  record_history(h, t);
  record_history(h, t);
  ASSERT_EQ(h.gpus.size(), 2u);
  EXPECT_EQ(h.gpus[kH0].util, (std::deque<uint8_t>{40, 40}));
  TopFrame failed;
  failed.error = "driver hung";
  record_history(h, failed);  // a failed read adds nothing
  EXPECT_EQ(h.gpus[kH0].util.size(), 2u);
  auto one = std::make_shared<Snapshot>(*t.snapshot);
  one->gpus.pop_back();
  t.snapshot = one;
  record_history(h, t);
  EXPECT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[kH0].util.size(), 3u);
  for (int i = 0; i < 700; ++i) record_history(h, t);
  EXPECT_EQ(h.gpus[kH0].util.size(), TopHistory::kSamples);  // bounded
}

}  // namespace
}  // namespace gpumap
