// The calling process observed (session/diagnose.h) in process, on FakeSession hosts: cuda:N
// predicted from the environment before CUDA runs, the driver's own answer once it does (a
// CudaProbe standing in for the live queries) with set-too-late when the environment now names
// other GPUs, and diagnose_self joining this process's memory by PID as `gpumap ps` joins it.
// The live path on a real GPU: tools/device/checks/operations_layer_real.sh.
//
// One combined fix (issue 43 item 2): where a run has findings with different fixes, one line that
// fixes them all, checked as each fix is (pasted, nothing above info left).
#include "session/diagnose.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "findings/fix_line.h"
#include "session/explain.h"

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


std::vector<Finding> findings_of(Session& s, const Environment& env) {
  return environment_findings(s, env, s.mapping(env, false));
}

std::string dump(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) out += "\n  [" + std::string(severity_name(f.severity)) + "] " + f.id + " | fix: " + f.fix;
  return out;
}

std::vector<std::string> above_info(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const Finding& f : fs)
    if (f.severity != Severity::kInfo) out.push_back(f.id);
  return out;
}

Environment pasted(const Environment& env, const std::string& line) {
  std::optional<std::vector<FixStep>> steps = parse_fix_line(line);
  EXPECT_TRUE(steps) << line;
  return steps ? apply_fix_steps(env, *steps) : env;
}

// What was seen: NVIDIA_VISIBLE_DEVICES=5 set outside a container, inside a Slurm step of GPUs 2,3.
// Each finding's fix leaves the other; the combined line leaves neither, on the step's GPUs.
TEST(CombinedFix, NvidiaVisibleDevicesOutsideAContainerInASlurmStep) {
  FakeSession f("dgx8", {"NVIDIA_VISIBLE_DEVICES=5", "SLURM_STEP_GPUS=2,3"});
  Session& s = f.session();
  Environment env = s.env();
  std::vector<Finding> fs = findings_of(s, env);
  ASSERT_EQ(above_info(fs), (std::vector<std::string>{"nvidia-visible-devices-outside-container", "slurm-gpus-not-applied"}))
      << dump(fs);
  for (const Finding& one : fs)  // the reproduction: one fix alone leaves a finding above info
    EXPECT_FALSE(above_info(findings_of(s, pasted(env, one.fix))).empty()) << one.fix;
  std::string line = combined_fix(s, env, fs);
  EXPECT_EQ(line, "unset NVIDIA_VISIBLE_DEVICES; export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3");
  Environment after = pasted(env, line);
  EXPECT_TRUE(above_info(findings_of(s, after)).empty()) << dump(findings_of(s, after));
  Mapping m = s.mapping(after, false);
  ASSERT_EQ(m.view.uuids.size(), 2u);
  EXPECT_EQ(s.snapshot().nvml_index_of(m.view.uuids[0]), 2);
  EXPECT_EQ(s.snapshot().nvml_index_of(m.view.uuids[1]), 3);
}

// CUDA_VISIBLE_DEVICES=1,9,2 on the mixed box: a cut list and indices in CUDA's order.
TEST(CombinedFix, ACutListOfIndicesOnAMixedHost) {
  FakeSession f("seed-mixed", {"CUDA_VISIBLE_DEVICES=1,9,2"});
  Session& s = f.session();
  Environment env = s.env();
  std::vector<Finding> fs = findings_of(s, env);
  ASSERT_GE(above_info(fs).size(), 2u) << dump(fs);
  std::string line = combined_fix(s, env, fs);
  EXPECT_EQ(line, "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,2");
  Environment after = pasted(env, line);
  EXPECT_TRUE(above_info(findings_of(s, after)).empty()) << dump(findings_of(s, after));
}

// One fix (or one cause): nothing to combine.  A finding with no fix that stays is no reason to
// refuse the line for the others, but one that the line would bring is.
TEST(CombinedFix, OnlyWhereThereIsSomethingToCombine) {
  FakeSession f("seed-mixed", {"CUDA_VISIBLE_DEVICES=all"});
  Session& s = f.session();
  EXPECT_EQ(combined_fix(s, s.env(), findings_of(s, s.env())), "");
  FakeSession clean("dgx8");
  EXPECT_EQ(combined_fix(clean.session(), clean.session().env(), findings_of(clean.session(), clean.session().env())), "");
  // Fixes that run a command cannot be combined into a line of variables.
  std::vector<Finding> odd = {{"a", Severity::kError, "m", "CUDA_VISIBLE_DEVICES=1 python3 train.py"},
                              {"b", Severity::kError, "m", "unset CUDA_VISIBLE_DEVICES"}};
  EXPECT_EQ(combined_fix(clean.session(), clean.session().env(), odd), "");
}

}  // namespace
}  // namespace gpumap
