// pick_now and lease_gpus in process (tests/fake_session.h): the answer `gpumap pick` renders,
// its refusals with the caller's words, and the round trip: the exports it prints, set in a new
// process, give exactly the GPUs it named.
#include "session/lease_gpus.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/text.h"

namespace gpumap {
namespace {

using testing::FakeSession;

PickRequest cli_request(int count) {
  PickRequest r;
  r.count = count;
  r.names = {.gpus = "--gpus", .wait = "--wait SECONDS", .allow_busy = "--allow-busy", .allow_unknown = "--allow-unknown",
             .include = "--include", .exclude = "--exclude", .limits = "--include/--exclude/--min-free-mib"};
  return r;
}

std::vector<std::string> as_env(const std::vector<std::pair<std::string, std::string>>& vars) {
  std::vector<std::string> env;
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  return env;
}

// Issue 43: a second lease in the process that holds the first (pin() twice) called its own
// lease "leased by pid N (root)".  It is named as this process's, with what to do first.
TEST(LeaseGpus, ThisProcesssOwnLeaseIsNamedAsSuch) {
  FakeSession f("h200x2");
  LeaseOptions opt{.what = "pin", .argv = {"python3", "train.py"}};
  LeasedGpus first = lease_gpus(f.session(), cli_request(2), opt);
  ASSERT_EQ(first.uuids.size(), 2u);
  opt.own_lease_fix = "reuse the earlier pin, or release it";
  try {
    lease_gpus(f.session(), cli_request(1), opt);
    FAIL() << "leased a GPU this process already holds";
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find("leased by pid"), std::string::npos) << what;
    ASSERT_EQ(e.passed_over().size(), 2u);
    for (const Rejection& r : e.passed_over())
      EXPECT_NE(join(r.reasons, "; ").find("already leased by this process"), std::string::npos) << join(r.reasons, "; ");
    EXPECT_EQ(e.hint().rfind("reuse the earlier pin, or release it; or ", 0), 0u) << e.hint();
  }
}

TEST(PickNow, TheExportsGiveExactlyThePickedGpusInANewProcess) {
  // Every host and form: what pick prints, pasted into a new shell, is the choice, cuda:0 first.
  for (const char* host : {"h200x2", "dgx8", "seed-mixed", "mig"})
    for (CvdForm form : {CvdForm::kIndex, CvdForm::kUuid})
      for (int n : {1, 2}) {
        FakeSession f(host, {"CUDA_DEVICE_ORDER=FASTEST_FIRST"});
        PickAnswer a;
        try {
          a = pick_now(f.session(), cli_request(n), form);
        } catch (const UnavailableError& e) {
          EXPECT_EQ(std::string(host), "mig") << e.what();  // MIG GPUs are never picked whole
          continue;
        }
        Session pasted = f.other(as_env(a.visibility.variables()));
        EXPECT_EQ(pasted.mapping().view.uuids, a.uuids) << host << " " << a.visibility.assignments();
        if (a.by_index.form == CvdForm::kIndex) {
          Session by_index = f.other(as_env(a.by_index.variables()));
          EXPECT_EQ(by_index.mapping().view.uuids, a.uuids) << host << " " << a.by_index.assignments();
        }
      }
}

TEST(PickNow, OnlyWithinTheVisibleSet) {
  FakeSession f("dgx8", {"CUDA_VISIBLE_DEVICES=5,6"});
  PickAnswer a = pick_now(f.session(), cli_request(2), CvdForm::kIndex);
  ASSERT_EQ(a.uuids.size(), 2u);
  for (const std::string& u : a.uuids) {
    int i = f.session().snapshot().nvml_index_of(u);
    EXPECT_TRUE(i == 5 || i == 6) << u;
  }
  try {
    pick_now(f.session(), cli_request(3), CvdForm::kIndex);
    FAIL() << "three GPUs of two visible";
  } catch (const UnavailableError& e) {
    EXPECT_EQ(e.exit_code(), kExitUnavailable);
    EXPECT_NE(std::string(e.what()).find("pick: "), std::string::npos) << e.what();
  }
}

TEST(PickNow, AskingForMoreThanExistIsRefusedWithTheCallersWords) {
  FakeSession f("h200x2");
  PickRequest r = cli_request(3);
  try {
    pick_now(f.session(), r, CvdForm::kIndex);
    FAIL();
  } catch (const UnavailableError& e) {
    EXPECT_EQ(e.hint(), "ask for fewer GPUs (--gpus), or relax --include/--exclude/--min-free-mib");
  }
  // The library's names in the same refusal.
  r.names.gpus = "gpus=";
  try {
    pick_now(f.session(), r, CvdForm::kIndex);
    FAIL();
  } catch (const UnavailableError& e) {
    EXPECT_NE(e.hint().find("(gpus=)"), std::string::npos) << e.hint();
  }
}

TEST(LeaseGpus, ALeasedGpuIsPassedOverByPickAndRefusedToASecondLease) {
  FakeSession f("h200x2");
  LeasedGpus held = lease_gpus(f.session(), cli_request(1), {.what = "run", .argv = {"train.py"}});
  ASSERT_EQ(held.uuids.size(), 1u);
  Session second = f.other({});
  PickAnswer a = pick_now(second, cli_request(1), CvdForm::kUuid);
  ASSERT_EQ(a.uuids.size(), 1u);
  EXPECT_NE(a.uuids[0], held.uuids[0]);
  ASSERT_EQ(a.passed_over.size(), 1u);
  // In process the second session is this same process, whose lease it is (another process reads
  // "leased by pid N (user)": tests/cli_run_test.cc).
  EXPECT_EQ(a.passed_over[0].reasons[0], kOwnLease);
  try {
    lease_gpus(second, cli_request(2), {.what = "run"});
    FAIL();
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("run: "), std::string::npos);
    EXPECT_EQ(e.hint(), "this process already holds them: reuse its lease, or release it first; or add --wait SECONDS "
                        "to wait for them, relax the limits, or --allow-busy");
    ASSERT_EQ(e.passed_over().size(), 1u);
  }
  held.leases.clear();  // released: the GPU qualifies again at once
  EXPECT_EQ(lease_gpus(second, cli_request(2), {.what = "run"}).uuids.size(), 2u);
}

}  // namespace
}  // namespace gpumap
