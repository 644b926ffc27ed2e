#include "env/environment.h"

extern char** environ;

namespace gpumap {

Environment Environment::from_strings(const std::vector<std::string>& entries) {
  Environment e;
  for (const std::string& s : entries) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    e.vars_.emplace(s.substr(0, eq), s.substr(eq + 1));  // first one wins, like getenv
  }
  return e;
}

Environment Environment::current() {
  std::vector<std::string> v;
  for (char** p = environ; p && *p; ++p) v.emplace_back(*p);
  return from_strings(v);
}

std::optional<std::string> Environment::get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Environment::to_strings() const {
  std::vector<std::string> out;
  out.reserve(vars_.size());
  for (const auto& [k, v] : vars_) out.push_back(k + "=" + v);
  return out;
}

const std::vector<std::string>& relevant_variables() {
  static const std::vector<std::string> names = {
      "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
      "CUDA_MPS_PIPE_DIRECTORY", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "GPU_DEVICE_ORDINAL",
      "SLURM_LOCALID", "SLURM_GPUS_ON_NODE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK", "WORLD_SIZE",
      "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK"};
  return names;
}

}  // namespace gpumap
