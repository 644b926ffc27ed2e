// The renderings (output/) of `launch` answers, in process: the tests of
// src/session/launch_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// Starting a program on chosen GPUs (session/launch.h) in process, on FakeSession hosts: the plan
// `gpumap bind` execs (the rank's GPUs from the job's CUDA view, the child's environment, what is
// said on stderr and in --json) and the lease and plan `gpumap run` starts its command under.
// Black-box in tests/cli_bind_test.cc and cli_run_test.cc: that the exec'd or started command
// really gets the plan's environment, exit codes, signals and leases across processes.
#include "session/launch.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/launch_view.h"

namespace gpumap {
namespace {

using testing::FakeSession;

/// What the rank's program gets: "$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER".
std::string seen(const BindAnswer& a) {
  const Environment& e = a.binding.plan.env;
  return e.get("CUDA_VISIBLE_DEVICES").value_or("") + "|" + e.get("CUDA_DEVICE_ORDER").value_or("");
}
/// "$CUDA_VISIBLE_DEVICES|$GPUMAP_BOUND|${GPUMAP_BOUND_OWN-unset}".
std::string seen_bound(const BindAnswer& a) {
  const Environment& e = a.binding.plan.env;
  return e.get("CUDA_VISIBLE_DEVICES").value_or("") + "|" + e.get("GPUMAP_BOUND").value_or("") + "|" +
         e.get("GPUMAP_BOUND_OWN").value_or("unset");
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

// Issue 43: a simulated host's CPUs are another machine's: bind --simulate shows the CPUs its GPU
// is near and binds none (the plan's cpus, what launch applies, stay empty; --json's "cpus" null).
TEST(StartBind, ASimulatedHostsCpusAreShownNeverApplied) {
  FakeSession r1("h200x2", {"LOCAL_RANK=1"});
  r1.host()["gpus"][1]["cpu_affinity"] = "96-191";
  BindAnswer a = bind(r1);
  EXPECT_TRUE(a.binding.plan.cpus.empty());
  EXPECT_EQ(cpu_summary(a.binding.plan),
            "not bound (simulated host: its GPUs' local CPUs 96-191 would be bound there; this machine's affinity is "
            "left as it is)");
  EXPECT_TRUE(bind_json(a)["cpus"].is_null());
}

TEST(StartBind, EachLocalRankVariableSelectsItsGpu) {
  for (const char* var : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                          "PMI_LOCAL_RANK", "LOCAL_RANK"}) {
    FakeSession r0("h200x2", {std::string(var) + "=0"});
    EXPECT_EQ(seen(bind(r0)), "0|PCI_BUS_ID") << var;
    FakeSession r1("h200x2", {std::string(var) + "=1"});
    BindAnswer a = bind(r1);
    EXPECT_EQ(seen(a), "1|PCI_BUS_ID") << var;
    EXPECT_NE(bind_text(a).find(std::string("local rank 1 (") + var + ")"), std::string::npos) << bind_text(a);
  }
}

TEST(StartBind, InnermostLauncherWins) {
  // mpirun inside an sbatch script: every rank inherits SLURM_LOCALID=0.
  FakeSession mpi("h200x2", {"SLURM_LOCALID=0", "OMPI_COMM_WORLD_LOCAL_RANK=1"});
  BindAnswer a = bind(mpi);
  EXPECT_EQ(seen(a), "1|PCI_BUS_ID");
  EXPECT_NE(bind_messages(a).find("innermost"), std::string::npos) << bind_messages(a);
  // torchrun inside srun.
  FakeSession tr("h200x2", {"SLURM_LOCALID=0", "LOCAL_RANK=1"});
  EXPECT_EQ(seen(bind(tr)), "1|PCI_BUS_ID");
}

TEST(StartBind, KeepVisibleRotatesTheJobsGpusSoTheRanksOwnIsCudaZero) {
  FakeSession r1("dgx8", {"LOCAL_RANK=1"});
  BindAnswer a = bind(r1, 1, true);
  EXPECT_EQ(seen_bound(a), "1,2,3,4,5,6,7,0|1,2,3,4,5,6,7,0|1");
  std::string text = bind_text(a);
  EXPECT_NE(text.find("cuda:0 -> GPU 1 GPU-"), std::string::npos) << text;
  EXPECT_NE(text.find("the other ranks' kept visible: cuda:1 -> GPU 2, "), std::string::npos) << text;
  EXPECT_NE(text.find("never cuda:$LOCAL_RANK"), std::string::npos) << text;
  // Two GPUs per rank, within the job's view (GPUs 4-7): rank 1 owns 6 and 7, then 4 and 5 follow.
  FakeSession two("dgx8",
                  {"OMPI_COMM_WORLD_LOCAL_RANK=1", "CUDA_VISIBLE_DEVICES=4,5,6,7", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_EQ(seen_bound(bind(two, 2, true)), "6,7,4,5|6,7,4,5|2");
  // Too few GPUs for the rank is the same error as without it; plain bind drops an inherited marker.
  FakeSession ninth("dgx8", {"LOCAL_RANK=8"});
  EXPECT_EQ(code_of(ninth, 1, true), kExitUnavailable);
  FakeSession plain("dgx8", {"LOCAL_RANK=2", "GPUMAP_BOUND_OWN=1"});
  EXPECT_EQ(seen_bound(bind(plain)), "2|2|unset");
  // The document names the rank's own devices and every device it sees.
  FakeSession j("dgx8", {"LOCAL_RANK=3"});
  BindAnswer ja = bind(j, 1, true);
  std::string doc = dump(bind_json(ja));
  EXPECT_NE(doc.find("\"own_devices\": 1"), std::string::npos) << doc;
  EXPECT_NE(doc.find("\"GPUMAP_BOUND_OWN\": \"1\""), std::string::npos) << doc;
  EXPECT_TRUE(bind_json(ja)["lease"].is_null()) << "bind takes no lease: the launcher owns the allocation";
  EXPECT_EQ(bind_json(ja)["local_rank"]["variable"], "LOCAL_RANK");
}

TEST(StartRun, LeasesThePickedGpusAndPlansTheCommandOnThem) {
  FakeSession f("h200x2");
  LeasedGpus held;
  LaunchAnswer a = start_run(f.session(), PickRequest{}, {.what = "run", .argv = {"python3", "train.py"}},
                             {.form = CvdForm::kUuid, .bind_cpus = false, .cpus_not_asked = "--no-cpu-bind"}, held);
  ASSERT_EQ(held.uuids.size(), 1u);
  EXPECT_FALSE(held.leases.empty());
  EXPECT_EQ(a.plan.uuids, held.uuids);
  EXPECT_EQ(a.plan.env.get("CUDA_VISIBLE_DEVICES"), std::optional<std::string>(held.uuids[0]));
  EXPECT_EQ(cpu_summary(a.plan), "not bound (--no-cpu-bind)");
  Json doc = run_json(a);
  EXPECT_EQ(doc["lease"]["dir"], a.lease_dir);
  EXPECT_EQ(doc["command"], (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_TRUE(doc["cpus"].is_null());
  EXPECT_EQ(run_text(a).rfind("gpumap run: leased 1 GPU (" + a.lease_dir +
                                  "); CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=" + held.uuids[0] +
                                  "\n  cuda:0 -> GPU ",
                              0),
            0u)
      << run_text(a);
  // Held: a second run in another process of the host gets the other GPU, and a third none.
  Session second = f.other({});
  LeasedGpus other;
  start_run(second, PickRequest{}, {.what = "run"}, {.bind_cpus = false}, other);
  ASSERT_EQ(other.uuids.size(), 1u);
  EXPECT_NE(other.uuids[0], held.uuids[0]);
  Session third = f.other({});
  LeasedGpus none;
  try {
    start_run(third, PickRequest{}, {.what = "run"}, {.bind_cpus = false}, none);
    ADD_FAILURE() << "a third GPU leased on a host of two";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUnavailable);
  }
  EXPECT_TRUE(none.uuids.empty()) << "all or none";
}

}  // namespace
}  // namespace gpumap
