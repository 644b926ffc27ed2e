// The renderings (output/) of `lease_gpus` answers, in process: the tests of
// src/session/lease_gpus_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// pick_now and lease_gpus in process (tests/fake_session.h): the answer `gpumap pick` renders,
// its refusals with the caller's words, and the round trip: the exports it prints, set in a new
// process, give exactly the GPUs it named.
#include "session/lease_gpus.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/text.h"
#include "output/pick_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

PickRequest cli_request(int count) {
  PickRequest r;
  r.count = count;
  r.names = {.gpus = "--gpus",
             .wait = "--wait SECONDS",
             .allow_busy = "--allow-busy",
             .allow_unknown = "--allow-unknown",
             .include = "--include",
             .exclude = "--exclude",
             .limits = "--include/--exclude/--min-free-mib"};
  return r;
}

TEST(PickNow, TakesTheIdleGpuAndSaysWhyTheOtherWasPassedOver) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 4242, .argv = {"python3", "busy.py"}});
  PickAnswer a = pick_now(f.session(), cli_request(1), CvdForm::kIndex);
  ASSERT_EQ(a.uuids, std::vector<std::string>{kH1});
  ASSERT_EQ(a.passed_over.size(), 1u);
  EXPECT_EQ(a.passed_over[0].nvml_index, 0u);
  EXPECT_FALSE(a.passed_over[0].reasons.empty());
  EXPECT_EQ(a.visibility.form, CvdForm::kIndex);
  EXPECT_EQ(a.visibility.cuda_visible_devices, "1");
  EXPECT_EQ(a.by_index.assignments(), "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1");
  Json j = pick_json(a);
  EXPECT_EQ(j["reserved"], false);
  EXPECT_EQ(j["passed_over"][0]["nvml_index"], 0);
  EXPECT_EQ(pick_exports(a), "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=1\n");
  std::string text = pick_text(a);
  EXPECT_NE(text.find("cuda:0 -> GPU 1  " + std::string(kH1)), std::string::npos) << text;
  EXPECT_NE(text.find("passed over GPU 0: "), std::string::npos) << text;
}

}  // namespace
}  // namespace gpumap
