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
  for (const char* var : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK",
                          "LOCAL_RANK"}) {
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

TEST(CliBind, MissingProgramIs127) {
  CliRun r = gpumap({"bind", "--simulate", "h200x2", "--", "gpumap-no-such-program"}, {"LOCAL_RANK=0"});
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("gpumap-no-such-program"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpumap::testing
