// misspelled_variables: the names of real reports fire, with the variable they meant; real names
// that sit near a target never do.
#include "env/variable_names.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

std::vector<MisspelledVariable> judge(const std::vector<std::string>& vars) {
  return misspelled_variables(Environment::from_strings(vars));
}

TEST(VariableNames, DistanceIsCaseInsensitiveAndCountsASwapOnce) {
  EXPECT_EQ(name_distance("cuda_visible_devices", "CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(name_distance("CUDA_VISIABLE_DEVICES", "CUDA_VISIBLE_DEVICES"), 1u);
  EXPECT_EQ(name_distance("CUDA_VISIBLE_DEVICE", "CUDA_VISIBLE_DEVICES"), 1u);
  EXPECT_EQ(name_distance("CUDA_VISBILE_DEVICES", "CUDA_VISIBLE_DEVICES"), 1u);  // two letters swapped
  EXPECT_EQ(name_distance("LOCAL_RANK", "LOCAL_SIZE"), 4u);
  EXPECT_EQ(name_distance("", "ABC"), 3u);
}

// The spellings of real reports (issue 52 item 6) and their kin.
TEST(VariableNames, MisspellingsOfRealReportsFireWithTheNameMeant) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"CUDA_VISIBLE", "CUDA_VISIBLE_DEVICES"},           {"CUDA_VISIBLE_DEVICE", "CUDA_VISIBLE_DEVICES"},
      {"CUDA_VISIABLE_DEVICES", "CUDA_VISIBLE_DEVICES"},  {"cuda_visible_devices", "CUDA_VISIBLE_DEVICES"},
      {"CUDA_VISIBLE_DEV", "CUDA_VISIBLE_DEVICES"},       {"CUDA_VISBILE_DEVICES", "CUDA_VISIBLE_DEVICES"},
      {"CUDA_VISIBLE_DEVICESS", "CUDA_VISIBLE_DEVICES"},  {"CUDA_DEVICE_ORDR", "CUDA_DEVICE_ORDER"},
      {"CUDA_DEVICES_ORDER", "CUDA_DEVICE_ORDER"},        {"NVIDIA_VISIBLE_DEVICE", "NVIDIA_VISIBLE_DEVICES"},
      {"NVIDIA_VISIBLE", "NVIDIA_VISIBLE_DEVICES"},       {"LOCAL_RANKS", "LOCAL_RANK"},
      {"local_rank", "LOCAL_RANK"},                       {"OMPI_COMM_WORLD_LOCAL_RNAK", "OMPI_COMM_WORLD_LOCAL_RANK"},
      {"LOCAL_WORLDSIZE", "LOCAL_WORLD_SIZE"},            {"SLURM_LOCAL_ID", "SLURM_LOCALID"},
  };
  for (const auto& [name, meant] : cases) {
    std::vector<MisspelledVariable> got = judge({name + "=0", "HOME=/root"});
    ASSERT_EQ(got.size(), 1u) << name;
    EXPECT_EQ(got[0].name, name);
    EXPECT_EQ(got[0].meant, meant) << name;
    EXPECT_EQ(got[0].value, "0");
    EXPECT_FALSE(got[0].what.empty());
  }
}

TEST(VariableNames, NotWhenTheRightNameIsSet) {
  EXPECT_TRUE(judge({"CUDA_VISIBLE=1", "CUDA_VISIBLE_DEVICES=0"}).empty());
  EXPECT_TRUE(judge({"LOCAL_RANKS=1", "LOCAL_RANK=0"}).empty());
  EXPECT_EQ(judge({"CUDA_VISIBLE=1", "LOCAL_RANK=0"}).size(), 1u);
}

// Names that real software sets (CUDA, the container toolkit, Slurm, torchrun, MPI, ROCm, NCCL,
// the shell): none of them is a misspelling, whatever target it is near.
TEST(VariableNames, RealNamesNeverFire) {
  const char* real[] = {
      "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_LAUNCH_BLOCKING",
      "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
      "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "CUDA_MODULE_LOADING", "CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE",
      "CUDA_CACHE_MAXSIZE", "CUDA_HOME", "CUDA_PATH", "CUDA_VERSION", "CUDA_ROOT", "CUDA_FORCE_PTX_JIT",
      "CUDA_DISABLE_PTX_JIT", "CUDA_AUTO_BOOST", "CUDA_DEVICE_WAITS_ON_EXCEPTION", "CUDA_COREDUMP_FILE",
      "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_MANAGED_FORCE_DEVICE_ALLOC", "CUDA_LOG_FILE",
      "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA", "NVIDIA_MIG_CONFIG_DEVICES",
      "NVIDIA_MIG_MONITOR_DEVICES", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_PRODUCT_NAME", "NVIDIA_CUDA_END_OF_LIFE",
      "NV_CUDA_LIB_VERSION", "NVARCH", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
      "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR", "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID",
      "SLURM_LOCALID", "SLURM_NODEID", "SLURM_PROCID", "SLURM_CPUS_ON_NODE", "SLURM_GPUS_ON_NODE", "SLURM_STEP_GPUS",
      "SLURM_JOB_GPUS", "SLURM_GPUS", "SLURM_GPUS_PER_TASK", "SLURM_NTASKS", "SLURM_NNODES", "SLURMD_NODENAME",
      "LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK", "WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
      "ROLE_WORLD_SIZE", "ROLE_NAME", "NODE_RANK", "GLOBAL_RANK", "LOCAL_SIZE", "MASTER_ADDR", "MASTER_PORT",
      "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "OMP_NUM_THREADS",
      "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
      "OMPI_COMM_WORLD_NODE_RANK", "PMIX_RANK", "PMIX_LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "PMI_LOCAL_RANK",
      "PMI_LOCAL_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
      "MV2_COMM_WORLD_LOCAL_SIZE", "HOROVOD_RANK", "HOROVOD_LOCAL_RANK", "HOROVOD_SIZE", "HOROVOD_LOCAL_SIZE",
      "NCCL_DEBUG", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME", "PYTORCH_CUDA_ALLOC_CONF",
      "TORCH_CUDA_ARCH_LIST", "TF_FORCE_GPU_ALLOW_GROWTH", "XLA_PYTHON_CLIENT_PREALLOCATE", "RAY_ADDRESS",
      "ACCELERATE_USE_DEEPSPEED", "VLLM_WORKER_MULTIPROC_METHOD", "HOME", "LANG", "PATH", "PWD", "USER", "SHELL",
      "TERM", "LC_ALL", "HOSTNAME", "LOGNAME", "TMPDIR", "LD_LIBRARY_PATH", "OLDPWD", "DISPLAY", "EDITOR",
      "GPUMAP_BOUND", "GPUMAP_BOUND_OWN", "GPUMAP_SIMULATE", "GPUMAP_CACHE_DIR",
  };
  std::vector<std::string> vars;
  for (const char* n : real) {
    EXPECT_TRUE(judge({std::string(n) + "=1"}).empty()) << n << " fired as " << judge({std::string(n) + "=1"})[0].meant;
    vars.push_back(std::string(n) + "=1");
  }
  // And all of them at once (each target set, so no misspelling could be judged either).
  EXPECT_TRUE(judge(vars).empty());
}

// A program may set a name no shell could (TensorFlowOnSpark's TFNode.py set CUDA_VISIBLE-DEVICES:
// tfos#64): a '-' is judged too; other characters are no name anyone meant.
TEST(VariableNames, ANameWithADashSetByAProgramIsJudged) {
  std::vector<MisspelledVariable> got = judge({"CUDA_VISIBLE-DEVICES=1"});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].meant, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(judge({"CUDA-VISIBLE-DEVICES=0"}).size(), 1u);
}

TEST(VariableNames, NamesNoShellCanSetOrTooFarAreLeftAlone) {
  EXPECT_TRUE(judge({"CUDA.VISIBLE.DEVICES=0"}).empty());  // no name anyone meant
  EXPECT_TRUE(judge({"-CUDA_VISIBLE_DEVICES=0"}).empty());
  EXPECT_TRUE(judge({"CUDA=0", "VISIBLE_DEVICES=0", "CUDA_DEVICE=0"}).empty());
  EXPECT_TRUE(judge({"CUDA_VISIBLE_DEVICES_OF_MY_JOB=0"}).empty());
}

}  // namespace
}  // namespace gpumap
