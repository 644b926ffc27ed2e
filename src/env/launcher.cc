#include "env/launcher.h"

#include "model/env_vars.h"
#include "model/text.h"

namespace gpumap {
namespace {

std::optional<uint32_t> get_u32(const Environment& env, const char* name) {
  auto v = env.get(name);
  uint32_t n;
  if (v && parse_small_uint(*v, n)) return n;
  return std::nullopt;
}

}  // namespace

IntList parse_int_list(const std::string& value) {
  IntList out;
  for (const std::string& part : split(value, ',')) {
    size_t dash = part.find('-');
    uint32_t a, b;
    if (dash != std::string::npos && parse_small_uint(part.substr(0, dash), a) &&
        parse_small_uint(part.substr(dash + 1), b) && a <= b && b - a < 4096) {
      for (uint32_t i = a; i <= b; ++i) out.values.push_back(i);
    } else if (parse_small_uint(part, a)) {
      out.values.push_back(a);
    } else {
      out.error = "`" + part + "` is not a GPU id or range";
      out.values.clear();
      return out;
    }
  }
  return out;
}

const LocalRank* LauncherEnv::rank() const {
  for (const LocalRank& r : local_ranks)
    if (r.value) return &r;
  return nullptr;
}

LauncherEnv parse_launcher_env(const Environment& env) {
  LauncherEnv out;
  // Innermost launcher first: torchrun inside srun, or mpirun inside an sbatch script (whose
  // SLURM_LOCALID=0 every rank inherits), leave the outer launcher's variable behind unchanged.
  for (const char* name : {env_var("LOCAL_RANK"), env_var("OMPI_COMM_WORLD_LOCAL_RANK"), env_var("MV2_COMM_WORLD_LOCAL_RANK"),
                           env_var("PMI_LOCAL_RANK"), env_var("SLURM_LOCALID")}) {
    auto v = env.get(name);
    if (!v) continue;
    LocalRank r;
    r.variable = name;
    uint32_t n;
    if (parse_small_uint(*v, n)) r.value = n;
    else r.error = std::string(name) + "=`" + *v + "` is not a non-negative integer";
    out.local_ranks.push_back(r);
  }
  out.local_world_size = get_u32(env, env_var("LOCAL_WORLD_SIZE"));
  for (const char* name : {env_var("RANK"), env_var("OMPI_COMM_WORLD_RANK"), env_var("PMIX_RANK"),
                           env_var("MV2_COMM_WORLD_RANK"), env_var("PMI_RANK"), env_var("SLURM_PROCID")})
    if (auto v = env.get(name)) {
      out.global_rank = *v;
      out.global_rank_variable = name;
      break;
    }
  if (auto v = env.get(env_var("SLURM_STEP_GPUS"))) out.slurm_step_gpus = parse_int_list(*v);
  if (auto v = env.get(env_var("SLURM_JOB_GPUS"))) out.slurm_job_gpus = parse_int_list(*v);
  out.gpu_device_ordinal = env.get(env_var("GPU_DEVICE_ORDINAL"));
  out.slurm_gpus_on_node = get_u32(env, env_var("SLURM_GPUS_ON_NODE"));
  out.in_slurm_step = env.get(env_var("SLURM_STEP_ID")).has_value() || env.get(env_var("SLURM_JOB_ID")).has_value();
  auto mark = env.get(env_var("GPUMAP_BOUND"));
  out.bound = mark && env.get(env_var("CUDA_VISIBLE_DEVICES")) == mark;
  if (out.bound) {
    auto own = get_u32(env, env_var("GPUMAP_BOUND_OWN"));
    if (own && *own > 0) out.bound_own = own;
  }
  return out;
}

}  // namespace gpumap
