// answer_list in process: what `gpumap list` adds to NVML's inventory (leases, cuda:N here).
#include "session/list.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "session/lease_gpus.h"

namespace gpumap {
namespace {

using testing::FakeSession;

TEST(AnswerList, NothingIsReadThatWasNotAsked) {
  FakeSession f("h200x2");
  ListAnswer a = answer_list(f.session(), {.cuda_ordinals = false, .leases = false, .place = false});
  EXPECT_TRUE(a.leases.empty());
  EXPECT_TRUE(a.cuda_ordinal.empty());
}

}  // namespace
}  // namespace gpumap
