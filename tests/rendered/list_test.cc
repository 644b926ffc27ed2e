// The renderings (output/) of `list` answers, in process: the tests of
// src/session/list_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// answer_list in process: what `gpumap list` adds to NVML's inventory (leases, cuda:N here).
#include "session/list.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "output/list_view.h"
#include "session/lease_gpus.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kH0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kH1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

TEST(AnswerList, EachGpuWithItsLeaseAndItsCudaNumberHere) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  PickRequest one;
  one.include = {"0"};
  Session other = f.other({});  // another process of the machine holds GPU 0
  LeasedGpus held = lease_gpus(other, one, {.what = "run", .argv = {"train.py"}});
  ListAnswer a = answer_list(f.session(), {.cuda_ordinals = true});
  ASSERT_EQ(a.snapshot->gpus.size(), 2u);
  EXPECT_TRUE(a.leases.at(kH0).held);
  EXPECT_FALSE(a.leases.at(kH1).held);
  EXPECT_EQ(a.cuda_ordinal, (std::map<std::string, int>{{kH1, 0}}));  // GPU 0 is hidden here
  Json j = list_json(a);
  EXPECT_EQ(j["gpus"][0]["lease"]["held"], true);
  EXPECT_TRUE(j["gpus"][1]["lease"].is_null());  // a free GPU: no lease object
  std::string text = list_text(a);
  EXPECT_NE(text.find("pid "), std::string::npos) << text;  // the holder, in words
  EXPECT_EQ(list_csv(a, {"index", "cuda_ordinal"}, {}), "index, cuda_ordinal\n0, [N/A]\n1, 0\n");
}

// Issue 43: into a pipe (a table that is not fitted) the LEASE cell keeps the holder's whole
// command; only a terminal's table shortens it.
TEST(AnswerList, APipeGetsTheLeaseHoldersWholeCommand) {
  FakeSession f("h200x2");
  PickRequest one;
  one.include = {"0"};
  Session other = f.other({});
  const std::string tail = "--config experiments/a-long-configuration-file-name.yaml --seed 1234567";
  LeasedGpus held = lease_gpus(other, one, {.what = "run", .argv = {"python3", "train.py", tail}});
  ListAnswer a = answer_list(f.session(), {.cuda_ordinals = false});
  std::string piped = list_text(a, TermStyle{});
  EXPECT_NE(piped.find(tail), std::string::npos) << piped;
  EXPECT_EQ(piped.find("..."), std::string::npos) << piped;
}

}  // namespace
}  // namespace gpumap
