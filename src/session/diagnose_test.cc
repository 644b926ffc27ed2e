// The calling process observed (session/diagnose.h) in process, on FakeSession hosts: cuda:N
// predicted from the environment before CUDA runs, the driver's own answer once it does (a
// CudaProbe standing in for the live queries) with set-too-late when the environment now names
// other GPUs, and diagnose_self joining this process's memory by PID as `gpumap ps` joins it.
// The live path on a real GPU: tools/device/operations_layer_real.sh.
#include "session/diagnose.h"

#include <gtest/gtest.h>

#include "fake_session.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // hosts/h200x2.json
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

bool has(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return true;
  return false;
}

TEST(ProcessCuda, BeforeCudaRunsTheEnvironmentPredicts) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  SelfProcess self;
  self.start = Environment::from_strings({"CUDA_VISIBLE_DEVICES=1"});
  self.command = {"python3", "train.py"};
  ProcessCudaFacts c = process_cuda(f.session(), self);
  EXPECT_FALSE(c.live);
  EXPECT_EQ(c.mapping.view.uuids, std::vector<std::string>{kH1});
  EXPECT_FALSE(c.predicted);
  EXPECT_EQ(c.command, self.command);
  EXPECT_FALSE(has(process_cuda_findings(f.session(), c), "set-too-late"));
}

TEST(ProcessCuda, OnceCudaRunsItsOwnAnswerStandsAndALaterChangeIsSetTooLate) {
  // CUDA started with GPU 0 only; the program set CUDA_VISIBLE_DEVICES=1 afterwards.
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  const Gpu& g0 = f.session().snapshot().gpus.at(0);
  SelfProcess self;
  self.live = CudaProbe{.devices = {{kH0, g0.pci_bus_id, g0.name}}};
  self.start = Environment::from_strings({"CUDA_VISIBLE_DEVICES=0"});
  self.command = {"python3", "train.py"};
  ProcessCudaFacts c = process_cuda(f.session(), self);
  EXPECT_TRUE(c.live);
  EXPECT_EQ(c.mapping.view.uuids, std::vector<std::string>{kH0});
  ASSERT_TRUE(c.predicted);
  EXPECT_EQ(c.predicted->view.uuids, std::vector<std::string>{kH1});
  std::vector<Finding> fs = process_cuda_findings(f.session(), c);
  ASSERT_TRUE(has(fs, "set-too-late"));
  EXPECT_NE(fs[0].fix.find("python3 train.py"), std::string::npos) << "the fix relaunches the command: " << fs[0].fix;
}

TEST(DiagnoseSelf, ThisProcessesMemoryIsJoinedByPid) {
  FakeSession f("h200x2");
  f.with_process(1, {.pid = 4300}, 1024);
  f.with_process(0, {.pid = 4301}, 64);  // another process: not counted
  SelfProcess self;
  self.pid = 4300;
  self.start = Environment::from_strings({});
  Diagnosis d = diagnose_self(f.session(), self, {});
  EXPECT_EQ(d.pid, 4300u);
  EXPECT_EQ(d.host_gpus, 2u);
  EXPECT_EQ(d.devices.size(), 2u);
  EXPECT_TRUE(d.program.memory_known);
  EXPECT_EQ(d.program.memory_mib, (std::map<std::string, uint64_t>{{kH1, 1024}}));
  EXPECT_TRUE(d.unlisted_gpus.empty());
  ASSERT_NE(d.snapshot, nullptr);
}

}  // namespace
}  // namespace gpumap
