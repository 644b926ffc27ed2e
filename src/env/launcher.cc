#include "env/launcher.h"

namespace gpumap {
namespace {

bool parse_u32(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  out = v;
  return true;
}

std::optional<uint32_t> get_u32(const Environment& env, const char* name) {
  auto v = env.get(name);
  uint32_t n;
  if (v && parse_u32(*v, n)) return n;
  return std::nullopt;
}

}  // namespace

IntList parse_int_list(const std::string& value) {
  IntList out;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    std::string part = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t dash = part.find('-');
    uint32_t a, b;
    if (dash != std::string::npos && parse_u32(part.substr(0, dash), a) &&
        parse_u32(part.substr(dash + 1), b) && a <= b && b - a < 4096) {
      for (uint32_t i = a; i <= b; ++i) out.values.push_back(i);
    } else if (parse_u32(part, a)) {
      out.values.push_back(a);
    } else {
      out.error = "`" + part + "` is not a GPU id or range";
      out.values.clear();
      return out;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
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
  for (const char* name : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                           "PMI_LOCAL_RANK", "LOCAL_RANK"}) {
    auto v = env.get(name);
    if (!v) continue;
    LocalRank r;
    r.variable = name;
    uint32_t n;
    if (parse_u32(*v, n)) r.value = n;
    else r.error = std::string(name) + "=`" + *v + "` is not a non-negative integer";
    out.local_ranks.push_back(r);
  }
  out.local_world_size = get_u32(env, "LOCAL_WORLD_SIZE");
  if (auto v = env.get("SLURM_STEP_GPUS")) out.slurm_step_gpus = parse_int_list(*v);
  if (auto v = env.get("SLURM_JOB_GPUS")) out.slurm_job_gpus = parse_int_list(*v);
  out.gpu_device_ordinal = env.get("GPU_DEVICE_ORDINAL");
  out.slurm_gpus_on_node = get_u32(env, "SLURM_GPUS_ON_NODE");
  out.in_slurm_step = env.get("SLURM_STEP_ID").has_value() || env.get("SLURM_JOB_ID").has_value();
  return out;
}

}  // namespace gpumap
