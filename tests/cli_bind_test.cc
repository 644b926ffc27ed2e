// Black-box tests of `gpumap bind`: one rank, its GPU(s) from the job's CUDA view, exec.
#include <gtest/gtest.h>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

const char* kGpu1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";  // hosts/h200x2.json, GPU 1

CliRun bind(const std::vector<std::string>& opts, const std::vector<std::string>& env) {
  std::vector<std::string> args = {"bind", "--simulate", "h200x2"};
  args.insert(args.end(), opts.begin(), opts.end());
  for (const char* a : {"--", "sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER\""}) args.push_back(a);
  return gpumap(args, env);
}

// Which GPU each rank gets, from which variable, in which form, with --keep-visible: the plan,
// in process (session/launch_test.cc).  Here what needs the process: the exec'd command really
// runs with the plan's environment, stderr says the binding, and refusals exit before it runs.
TEST(CliBind, TheRanksCommandRunsWithItsGpu) {
  CliRun r0 = bind({}, {"LOCAL_RANK=0"});
  EXPECT_EQ(r0.code, 0) << r0.err;
  EXPECT_EQ(r0.out, "0|PCI_BUS_ID\n");
  CliRun r1 = bind({"--cvd-form", "uuid"}, {"MPI_LOCALRANKID=1"});
  EXPECT_EQ(r1.out, std::string(kGpu1) + "|PCI_BUS_ID\n") << r1.err;
  EXPECT_NE(r1.err.find("local rank 1 (MPI_LOCALRANKID)"), std::string::npos) << r1.err;
}

TEST(CliBind, RefusalsExitBeforeTheCommandRuns) {
  CliRun r = bind({}, {});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no local rank"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");  // the command never ran
  CliRun few = bind({}, {"SLURM_LOCALID=2"});
  EXPECT_EQ(few.code, 6);
  EXPECT_NE(few.err.find("this job sees 2 GPUs"), std::string::npos) << few.err;
  EXPECT_EQ(few.out, "");
  EXPECT_EQ(bind({"--gpus-per-rank", "0"}, {"LOCAL_RANK=0"}).code, 2);
}

CliRun bind_dgx8(const std::vector<std::string>& opts, const std::vector<std::string>& env) {
  std::vector<std::string> args = {"bind", "--simulate", "dgx8"};
  args.insert(args.end(), opts.begin(), opts.end());
  for (const char* a : {"--", "sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$GPUMAP_BOUND|${GPUMAP_BOUND_OWN-unset}\""})
    args.push_back(a);
  return gpumap(args, env);
}

TEST(CliBind, KeepVisibleReachesTheCommandAndJsonGoesToStderr) {
  CliRun r1 = bind_dgx8({"--keep-visible"}, {"LOCAL_RANK=1"});
  EXPECT_EQ(r1.code, 0) << r1.err;
  EXPECT_EQ(r1.out, "1,2,3,4,5,6,7,0|1,2,3,4,5,6,7,0|1\n");
  CliRun plain = bind_dgx8({}, {"LOCAL_RANK=2", "GPUMAP_BOUND_OWN=1"});
  EXPECT_EQ(plain.out, "2|2|unset\n") << plain.err;
  // --json names the rank's own devices and every device it sees.
  CliRun j = gpumap({"bind", "--simulate", "dgx8", "--keep-visible", "--json", "--", "true"}, {"LOCAL_RANK=3"});
  EXPECT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.err.find("\"own_devices\": 1"), std::string::npos) << j.err;  // stdout is the command's
  EXPECT_NE(j.err.find("\"GPUMAP_BOUND_OWN\": \"1\""), std::string::npos) << j.err;
}

TEST(CliBind, DoctorInsideAKeepVisibleRankIsQuietAndSaysCudaZero) {
  // What bind --keep-visible hands rank 2 of torchrun's 4: doctor, run as that rank, has no error.
  std::vector<std::string> env = {"LOCAL_RANK=2", "LOCAL_WORLD_SIZE=4", "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                  "CUDA_VISIBLE_DEVICES=2,3,4,5,6,7,0,1", "GPUMAP_BOUND=2,3,4,5,6,7,0,1",
                                  "GPUMAP_BOUND_OWN=1"};
  CliRun d = gpumap({"doctor", "--simulate", "dgx8", "--json"}, env);
  EXPECT_EQ(d.code, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("\"bound-rank\""), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("\"severity\": \"error\""), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("\"severity\": \"warning\""), std::string::npos) << d.out;
}

TEST(CliBind, MissingProgramIs127) {
  CliRun r = gpumap({"bind", "--simulate", "h200x2", "--", "gpumap-no-such-program"}, {"LOCAL_RANK=0"});
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("gpumap-no-such-program"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpumap::testing
