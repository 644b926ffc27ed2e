// One combined fix (issue 43 item 2): where a run has findings with different fixes, one line that
// fixes them all, checked as each fix is (pasted, nothing above info left).
#include "session/diagnose.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "findings/fix_line.h"
#include "session/explain.h"

namespace gpumap {
namespace {

using testing::FakeSession;

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
