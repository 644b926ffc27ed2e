// Starting a program on chosen GPUs (session/launch.h) in process, on FakeSession hosts: the plan
// `gpumap bind` execs (the rank's GPUs from the job's CUDA view, the child's environment, what is
// said on stderr and in --json) and the lease and plan `gpumap run` starts its command under.
// Black-box in tests/cli_bind_test.cc and cli_run_test.cc: that the exec'd or started command
// really gets the plan's environment, exit codes, signals and leases across processes.
#include "session/launch.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kGpu0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // hosts/h200x2.json
const char* kGpu1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

/// What the rank's program gets: "$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER".
std::string seen(const BindAnswer& a) {
  const Environment& e = a.binding.plan.env;
  return e.get("CUDA_VISIBLE_DEVICES").value_or("") + "|" + e.get("CUDA_DEVICE_ORDER").value_or("");
}

BindAnswer bind(FakeSession& f, size_t per_rank = 1, bool keep_visible = false, CvdForm form = CvdForm::kIndex) {
  return start_bind(f.session(), per_rank, keep_visible,
                    {.form = form, .bind_cpus = true, .mark_bound = true, .cpus_not_asked = "--no-cpu-bind"},
                    {"sh", "-c", "true"});
}

int code_of(FakeSession& f, size_t per_rank = 1, bool keep_visible = false) {
  try {
    bind(f, per_rank, keep_visible);
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

TEST(StartBind, NoRankFailsLoudly) {
  FakeSession none("h200x2");
  try {
    bind(none);
    ADD_FAILURE() << "bound without a rank";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("no local rank"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("LOCAL_RANK"), std::string::npos) << e.what();
  }
  FakeSession bad("h200x2", {"LOCAL_RANK=one"});
  try {
    bind(bad);
    ADD_FAILURE() << "bound with LOCAL_RANK=one";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("LOCAL_RANK"), std::string::npos) << e.what();
  }
}

TEST(StartBind, RanksFollowTheJobsCudaView) {
  // The job sees GPU 1 then GPU 0: rank 0 is cuda:0, which is GPU 1.
  FakeSession f("h200x2", {"LOCAL_RANK=0", "CUDA_VISIBLE_DEVICES=1,0"});
  EXPECT_EQ(seen(bind(f)), "1|PCI_BUS_ID");
  EXPECT_EQ(seen(bind(f, 2)), "1,0|PCI_BUS_ID");
  EXPECT_EQ(seen(bind(f, 2, false, CvdForm::kUuid)), std::string(kGpu1) + "," + kGpu0 + "|PCI_BUS_ID");
}

TEST(StartBind, TooFewGpusForTheRank) {
  FakeSession third("h200x2", {"SLURM_LOCALID=2"});
  try {
    bind(third);
    ADD_FAILURE() << "rank 2 of a job that sees 2 GPUs was bound";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUnavailable);
    EXPECT_NE(std::string(e.what()).find("this job sees 2 GPUs"), std::string::npos) << e.what();
  }
  FakeSession pair("h200x2", {"LOCAL_RANK=1"});
  EXPECT_EQ(code_of(pair, 2), kExitUnavailable);
  FakeSession one("h200x2", {"LOCAL_RANK=1", "CUDA_VISIBLE_DEVICES=0"});
  EXPECT_EQ(code_of(one), kExitUnavailable);
}

}  // namespace
}  // namespace gpumap
