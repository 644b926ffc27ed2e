// The launchers' variables and the local-device rule (env/launcher.h), on values: the one home
// that `gpumap bind`, `gpumap explain`, the findings, the C API and the Python package read.
#include "env/launcher.h"

#include <gtest/gtest.h>

#include "model/env_vars.h"
#include "model/error.h"

namespace gpumap {
namespace {

LauncherEnv launch(std::vector<std::string> vars) { return parse_launcher_env(Environment::from_strings(vars)); }

// Each name of the two lists is one of model/env_vars.h's (the man page's ENVIRONMENT and env_var()
// know it).  A test, not a static_assert: GCC's sanitizer build does not fold the pointer search.
TEST(LauncherEnv, EveryLauncherVariableIsInTheVariableTable) {
  for (const char* n : kLocalRankVariables) EXPECT_NE(find_env_var(n), nullptr) << n;
  for (const char* n : kGlobalRankVariables) EXPECT_NE(find_env_var(n), nullptr) << n;
}

TEST(LauncherEnv, EveryLocalRankVariableIsReadInnermostFirst) {
  // MPICH's Hydra and Intel MPI set MPI_LOCALRANKID (issue 45: only the Python package knew it).
  for (const char* var : kLocalRankVariables) {
    LauncherEnv l = launch({std::string(var) + "=3"});
    ASSERT_NE(l.rank(), nullptr) << var;
    EXPECT_EQ(l.rank()->variable, var);
    EXPECT_EQ(l.rank()->value, 3u) << var;
  }
  EXPECT_EQ(launch({"MPI_LOCALRANKID=1"}).rank()->variable, "MPI_LOCALRANKID");
  // mpirun inside an sbatch script: every rank inherits SLURM_LOCALID=0; the MPI's wins.
  LauncherEnv l = launch({"SLURM_LOCALID=0", "MPI_LOCALRANKID=2"});
  EXPECT_EQ(l.local_ranks.size(), 2u);
  EXPECT_EQ(l.rank()->variable, "MPI_LOCALRANKID");
  EXPECT_EQ(local_rank_variables_words(),
            "LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK, PMI_LOCAL_RANK or "
            "SLURM_LOCALID");
}

TEST(LauncherEnv, GlobalRankAndWorldSize) {
  for (const char* var : kGlobalRankVariables) {
    LauncherEnv l = launch({std::string(var) + "=7"});
    EXPECT_EQ(l.global_rank, "7") << var;
    EXPECT_EQ(l.global_rank_variable, var);
  }
  LauncherEnv l = launch({"PMI_RANK=5", "PMIX_RANK=4", "WORLD_SIZE=16"});
  EXPECT_EQ(l.global_rank_variable, "PMIX_RANK");
  EXPECT_EQ(l.world_size, 16u);
}

TEST(LocalDevice, TheRankPicksItsOrdinal) {
  LocalDevice d = choose_local_device(launch({"MPI_LOCALRANKID=1"}), 2, std::nullopt);
  EXPECT_EQ(d.code, 0);
  EXPECT_EQ(d.cuda_ordinal, 1u);
  ASSERT_TRUE(d.rank);
  EXPECT_EQ(d.rank->variable, "MPI_LOCALRANKID");
  EXPECT_NE(d.why.find("MPI_LOCALRANKID=1"), std::string::npos) << d.why;
}

TEST(LocalDevice, Cuda0WhereNothingElseCanBeMeant) {
  EXPECT_EQ(choose_local_device(launch({}), 4, std::nullopt).cuda_ordinal, 0u);  // a lone process
  EXPECT_EQ(choose_local_device(launch({"LOCAL_RANK=3"}), 1, std::nullopt).cuda_ordinal, 0u);  // one GPU
  // gpumap bind narrowed the rank: its own GPU is cuda:0 whatever its rank.
  LocalDevice bound = choose_local_device(launch({"LOCAL_RANK=1", "CUDA_VISIBLE_DEVICES=1,0", "GPUMAP_BOUND=1,0"}), 2,
                                          std::string("1,0"));
  EXPECT_EQ(bound.cuda_ordinal, 0u);
  // Slurm's per-task binding: fewer visible than the node's GPUs.
  EXPECT_EQ(choose_local_device(launch({"SLURM_LOCALID=3", "SLURM_GPUS_ON_NODE=4"}), 2, std::nullopt).cuda_ordinal, 0u);
}

TEST(LocalDevice, RefusalsSayWhyAndTheFix) {
  LocalDevice none = choose_local_device(launch({"LOCAL_RANK=0"}), 0, std::string(""));
  EXPECT_EQ(none.code, kExitUnavailable);
  EXPECT_FALSE(none.cuda_ordinal);
  EXPECT_NE(none.message.find("no GPU"), std::string::npos);
  LocalDevice past = choose_local_device(launch({"PMI_LOCAL_RANK=2"}), 2, std::nullopt);
  EXPECT_EQ(past.code, kExitUnavailable);
  EXPECT_NE(past.message.find("PMI_LOCAL_RANK=2"), std::string::npos) << past.message;
  EXPECT_NE(past.hint.find("gpumap bind"), std::string::npos);
  // The first variable set decides, as in bind: a bad one is not skipped for a later one.
  LocalDevice bad = choose_local_device(launch({"LOCAL_RANK=x", "SLURM_LOCALID=1"}), 2, std::nullopt);
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.message.find("LOCAL_RANK=`x`"), std::string::npos) << bad.message;
}

}  // namespace
}  // namespace gpumap
