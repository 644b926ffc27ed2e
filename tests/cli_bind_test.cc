// Black-box tests of `gpumap bind`: one rank, its GPU(s) from the job's CUDA view, exec.
#include <gtest/gtest.h>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

const char* kGpu0 = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";  // hosts/h200x2.json
const char* kGpu1 = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";

CliRun bind(const std::vector<std::string>& opts, const std::vector<std::string>& env) {
  std::vector<std::string> args = {"bind", "--simulate", "h200x2"};
  args.insert(args.end(), opts.begin(), opts.end());
  for (const char* a : {"--", "sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER\""}) args.push_back(a);
  return gpumap(args, env);
}

TEST(CliBind, EachLocalRankVariableSelectsItsGpu) {
  for (const char* var : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                          "PMI_LOCAL_RANK", "LOCAL_RANK"}) {
    CliRun r0 = bind({}, {std::string(var) + "=0"});
    EXPECT_EQ(r0.code, 0) << var << ": " << r0.err;
    EXPECT_EQ(r0.out, "0|PCI_BUS_ID\n") << var;
    CliRun r1 = bind({}, {std::string(var) + "=1"});
    EXPECT_EQ(r1.out, "1|PCI_BUS_ID\n") << var;
    EXPECT_NE(r1.err.find(std::string("local rank 1 (") + var + ")"), std::string::npos) << r1.err;
  }
}

TEST(CliBind, NoRankFailsLoudly) {
  CliRun r = bind({}, {});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no local rank"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("LOCAL_RANK"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");  // the command never ran
  CliRun bad = bind({}, {"LOCAL_RANK=one"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("LOCAL_RANK"), std::string::npos) << bad.err;
}

TEST(CliBind, RanksFollowTheJobsCudaView) {
  // The job sees GPU 1 then GPU 0: rank 0 is cuda:0, which is GPU 1.
  CliRun r = bind({}, {"LOCAL_RANK=0", "CUDA_VISIBLE_DEVICES=1,0"});
  EXPECT_EQ(r.out, "1|PCI_BUS_ID\n") << r.err;
  CliRun two = bind({"--gpus-per-rank", "2"}, {"LOCAL_RANK=0", "CUDA_VISIBLE_DEVICES=1,0"});
  EXPECT_EQ(two.out, "1,0|PCI_BUS_ID\n") << two.err;
  CliRun uuid = bind({"--gpus-per-rank", "2", "--cvd-form", "uuid"}, {"LOCAL_RANK=0", "CUDA_VISIBLE_DEVICES=1,0"});
  EXPECT_EQ(uuid.out, std::string(kGpu1) + "," + kGpu0 + "|PCI_BUS_ID\n") << uuid.err;
}

TEST(CliBind, TooFewGpusForTheRank) {
  CliRun r = bind({}, {"SLURM_LOCALID=2"});
  EXPECT_EQ(r.code, 6);
  EXPECT_NE(r.err.find("this job sees 2 GPUs"), std::string::npos) << r.err;
  CliRun p = bind({"--gpus-per-rank", "2"}, {"LOCAL_RANK=1"});
  EXPECT_EQ(p.code, 6);
  CliRun one = bind({}, {"LOCAL_RANK=1", "CUDA_VISIBLE_DEVICES=0"});
  EXPECT_EQ(one.code, 6);
  EXPECT_EQ(bind({"--gpus-per-rank", "0"}, {"LOCAL_RANK=0"}).code, 2);
}

TEST(CliBind, InnermostLauncherWins) {
  // mpirun inside an sbatch script: every rank inherits SLURM_LOCALID=0.
  CliRun mpi = bind({}, {"SLURM_LOCALID=0", "OMPI_COMM_WORLD_LOCAL_RANK=1"});
  EXPECT_EQ(mpi.out, "1|PCI_BUS_ID\n") << mpi.err;
  EXPECT_NE(mpi.err.find("innermost"), std::string::npos) << mpi.err;
  // torchrun inside srun.
  CliRun tr = bind({}, {"SLURM_LOCALID=0", "LOCAL_RANK=1"});
  EXPECT_EQ(tr.out, "1|PCI_BUS_ID\n") << tr.err;
}

CliRun bind_dgx8(const std::vector<std::string>& opts, const std::vector<std::string>& env) {
  std::vector<std::string> args = {"bind", "--simulate", "dgx8"};
  args.insert(args.end(), opts.begin(), opts.end());
  for (const char* a : {"--", "sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$GPUMAP_BOUND|${GPUMAP_BOUND_OWN-unset}\""})
    args.push_back(a);
  return gpumap(args, env);
}

TEST(CliBind, KeepVisibleRotatesTheJobsGpusSoTheRanksOwnIsCudaZero) {
  CliRun r1 = bind_dgx8({"--keep-visible"}, {"LOCAL_RANK=1"});
  EXPECT_EQ(r1.code, 0) << r1.err;
  EXPECT_EQ(r1.out, "1,2,3,4,5,6,7,0|1,2,3,4,5,6,7,0|1\n");
  EXPECT_NE(r1.err.find("cuda:0 -> GPU 1 GPU-"), std::string::npos) << r1.err;
  EXPECT_NE(r1.err.find("the other ranks' kept visible: cuda:1 -> GPU 2, "), std::string::npos) << r1.err;
  EXPECT_NE(r1.err.find("never cuda:$LOCAL_RANK"), std::string::npos) << r1.err;
  // Two GPUs per rank, within the job's view (GPUs 4-7): rank 1 owns 6 and 7, then 4 and 5 follow.
  CliRun two = bind_dgx8({"--keep-visible", "--gpus-per-rank", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK=1",
                                                                       "CUDA_VISIBLE_DEVICES=4,5,6,7",
                                                                       "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_EQ(two.out, "6,7,4,5|6,7,4,5|2\n") << two.err;
  // Too few GPUs for the rank is the same error as without it; plain bind drops an inherited marker.
  EXPECT_EQ(bind_dgx8({"--keep-visible"}, {"LOCAL_RANK=8"}).code, 6);
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
