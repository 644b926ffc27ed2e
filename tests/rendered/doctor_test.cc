// The renderings (output/) of `doctor` answers, in process: every test of
// src/session/doctor_test.cc asserted on what the answer prints, so the file moved here
// whole and session/ tests test answers (issue 57; tests/layers_test.cc).
// `gpumap doctor`'s answer (session/diagnose.h doctor) and its renderings (output/doctor_view.h), in
// process: the cuda:N numbering said in one line whenever it is not nvidia-smi's (issue 52 item 1),
// never "numbering is what it looks like" then, and one cause within eight lines.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_session.h"
#include "findings/fix_line.h"
#include "output/doctor_view.h"
#include "session/diagnose.h"

namespace gpumap {
namespace {

using testing::FakeSession;

struct DoctorRun {
  DoctorAnswer answer;
  std::string text;
  Json json;
};

DoctorRun run(const std::string& host, const std::vector<std::string>& env, bool verbose = false) {
  FakeSession f(host, env);
  DoctorRun r;
  r.answer = doctor(f.session(), f.session().env(), false, verbose);
  r.text = doctor_text(r.answer, TermStyle{});
  r.json = doctor_json(r.answer);
  r.answer.snapshot = nullptr;
  return r;
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(Doctor, ASubsetOfTheGpusIsSaidInOneLine) {
  DoctorRun r = run("dgx8", {"CUDA_VISIBLE_DEVICES=3,5"});
  EXPECT_EQ(r.answer.renumbering, "cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5");
  EXPECT_NE(r.text.find("8 GPUs\ncuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5\n"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("what it looks like"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("No traps found."), std::string::npos) << r.text;
  EXPECT_EQ(r.json["renumbering"], "cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5");
  EXPECT_EQ(r.answer.errors + r.answer.warnings + r.answer.infos, r.answer.findings.size());
  // The reminder is still only for -v; the line is said either way.
  EXPECT_EQ(r.text.find("ordinals-are-relative"), std::string::npos);
  DoctorRun v = run("dgx8", {"CUDA_VISIBLE_DEVICES=3,5"}, true);
  EXPECT_NE(v.text.find("ordinals-are-relative"), std::string::npos) << v.text;
  EXPECT_EQ(v.answer.renumbering, r.answer.renumbering);
}

TEST(Doctor, TheIdentityIsWhatItLooksLike) {
  for (std::vector<std::string> env : {std::vector<std::string>{}, {"CUDA_VISIBLE_DEVICES=0,1"}}) {
    DoctorRun r = run("dgx8", env);
    EXPECT_EQ(r.answer.renumbering, "");
    EXPECT_TRUE(r.json["renumbering"].is_null());
    EXPECT_NE(r.text.find("No traps found: cuda:N numbering is what it looks like."), std::string::npos) << r.text;
  }
}

TEST(Doctor, AReorderAndAContainerAreRenumberings) {
  EXPECT_EQ(run("dgx8", {"CUDA_VISIBLE_DEVICES=1,0"}).answer.renumbering, "cuda:0 = nvidia-smi GPU 1, cuda:1 = GPU 0");
  // Inside a container given host GPUs 2 and 3: nvidia-smi there says 0 and 1, the host says 2 and 3.
  FakeSession f("dgx8", {"NVIDIA_VISIBLE_DEVICES=2,3"});
  f.session().enter_container("2,3");
  DoctorAnswer a = doctor(f.session(), f.session().env(), false, false);
  EXPECT_NE(a.renumbering.find("(host GPU 2)"), std::string::npos) << a.renumbering;
  EXPECT_NE(a.renumbering.find("(host GPU 3)"), std::string::npos) << a.renumbering;
  EXPECT_EQ(doctor_text(a, TermStyle{}).find("what it looks like"), std::string::npos);
}

TEST(Doctor, NoLineWhenCudaWouldFail) {
  DoctorRun r = run("dgx8", {"CUDA_VISIBLE_DEVICES=1,1"});
  EXPECT_EQ(r.answer.renumbering, "");
  EXPECT_GE(r.answer.errors, 1u);
  EXPECT_FALSE(r.json["ok"].get<bool>());
}

// One cause: the banner, the finding with its fix and note, the counts: eight lines at most.
TEST(Doctor, OneCauseWithinEightLines) {
  for (std::vector<std::string> env : {std::vector<std::string>{"SLURM_JOB_ID=7", "CUDA_VISIBLE_DEVICES=NoDevFiles"},
                                       {"CUDA_VISIBLE=3"},
                                       {"CUDA_VISIBLE_DEVICES=RR"},
                                       {"CUDA_VISIBLE_DEVICES=3,5", "CUDA_DEVICE_ORDER=pci_bus_id"},
                                       {"CUDA_VISIBLE_DEVICES=3,5", "LOCAL_RANK=2"}}) {
    DoctorRun r = run("dgx8", env);
    EXPECT_EQ(r.answer.findings.size(), 1u) << r.text;
    EXPECT_LE(lines(r.text), 8u) << r.text;
  }
}

TEST(Doctor, TheMisspellingsFixPastedLeavesNothingAboveInfo) {
  DoctorRun r = run("dgx8", {"CUDA_VISIBLE=3"});
  ASSERT_EQ(r.answer.findings.size(), 1u) << r.text;
  EXPECT_EQ(r.answer.findings[0].id, "misspelled-variable");
  EXPECT_EQ(r.answer.renumbering, "");  // the misspelled name selects nothing: every GPU, as numbered
  std::optional<std::vector<FixStep>> steps = parse_fix_line(r.answer.findings[0].fix);
  ASSERT_TRUE(steps);
  Environment pasted = apply_fix_steps(Environment::from_strings({"CUDA_VISIBLE=3"}), *steps);
  DoctorRun after = run("dgx8", pasted.to_strings());
  EXPECT_EQ(after.answer.errors + after.answer.warnings, 0u) << after.text;
  EXPECT_EQ(after.answer.renumbering, "cuda:0 = nvidia-smi GPU 3");
}

}  // namespace
}  // namespace gpumap
