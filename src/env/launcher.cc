#include "env/launcher.h"

#include <cctype>

#include "model/env_vars.h"
#include "model/error.h"
#include "model/ascii.h"
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

std::string local_rank_variables_words(const char* last_joiner) {
  std::string out;
  size_t n = std::size(kLocalRankVariables);
  for (size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? std::string(" ") + last_joiner + " " : ", ") + std::string(kLocalRankVariables[i]);
  return out;
}

const LocalRank* LauncherEnv::rank() const {
  for (const LocalRank& r : local_ranks)
    if (r.value) return &r;
  return nullptr;
}

bool is_loopback_address(const std::string& addr) {
  std::string a = ascii::lower(trim(addr));
  if (a == "localhost" || a == "::1" || a == "[::1]" || a == "ip6-localhost") return true;
  std::vector<std::string> parts = split(a, '.');
  uint32_t n;
  if (parts.size() != 4 || parts[0] != "127") return false;
  for (const std::string& p : parts)
    if (!parse_small_uint(p, n) || n > 255) return false;
  return true;
}

std::optional<std::pair<uint32_t, std::string>> LauncherEnv::ranks_on_node() const {
  if (local_world_size) return std::make_pair(*local_world_size, "LOCAL_WORLD_SIZE=" + std::to_string(*local_world_size));
  if (world_size && master_addr && is_loopback_address(*master_addr))
    return std::make_pair(*world_size, "WORLD_SIZE=" + std::to_string(*world_size) + " with MASTER_ADDR=" + *master_addr +
                                           " (one node)");
  return std::nullopt;
}

LauncherEnv parse_launcher_env(const Environment& env) {
  LauncherEnv out;
  // Innermost launcher first: torchrun inside srun, or mpirun inside an sbatch script (whose
  // SLURM_LOCALID=0 every rank inherits), leave the outer launcher's variable behind unchanged.
  for (const char* name : kLocalRankVariables) {
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
  out.world_size = get_u32(env, env_var("WORLD_SIZE"));
  out.master_addr = env.get(env_var("MASTER_ADDR"));
  for (const char* name : kGlobalRankVariables)
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

LocalDevice choose_local_device(const LauncherEnv& launch, size_t visible, const std::optional<std::string>& cvd) {
  LocalDevice d;
  if (!launch.local_ranks.empty()) d.rank = launch.local_ranks.front();  // the innermost launcher's, as bind
  if (visible == 0) {
    d.code = kExitUnavailable;
    d.message = "this process sees no GPU (CUDA_VISIBLE_DEVICES=" + (cvd ? "'" + *cvd + "'" : std::string("unset")) + ")";
    d.hint = "run `gpumap doctor` for why; under Ray ask for GPUs with num_gpus=1";
    return d;
  }
  auto use = [&](uint32_t n, std::string why) {
    d.cuda_ordinal = n;
    d.why = std::move(why);
    return d;
  };
  if (launch.bound) return use(0, "gpumap bind put this rank's own GPU(s) first (GPUMAP_BOUND matches CUDA_VISIBLE_DEVICES)");
  if (!d.rank) return use(0, "no launcher set a local rank (" + local_rank_variables_words() + ")");
  if (visible == 1) return use(0, "this process sees one GPU");
  const LocalRank& r = *d.rank;
  if (!r.value) {
    d.code = kExitUsage;
    d.message = (r.error.empty() ? r.variable + " is not set to a number" : r.error) + " (a local rank: a whole number from 0)";
    d.hint = "start the program with torchrun, mpirun or srun, which set it";
    return d;
  }
  if (r.variable == "SLURM_LOCALID" && launch.slurm_gpus_on_node && visible < *launch.slurm_gpus_on_node)
    return use(0, "Slurm bound GPUs per task: this task sees " + std::to_string(visible) + " of the node's " +
                      std::to_string(*launch.slurm_gpus_on_node) + " (SLURM_GPUS_ON_NODE), its own from cuda:0");
  if (*r.value >= visible) {
    d.code = kExitUnavailable;
    d.message = r.variable + "=" + std::to_string(*r.value) + " but this process sees " + std::to_string(visible) +
                " GPUs: cuda:" + std::to_string(*r.value) + " does not exist";
    d.hint = "start each rank under `gpumap bind -- <your command>` (it gives each rank its own GPU as cuda:0), "
             "or start no more ranks per node than GPUs";
    return d;
  }
  return use(*r.value, "the local rank " + r.variable + "=" + std::to_string(*r.value) + ": each rank of the node its own GPU");
}

}  // namespace gpumap
