#include "session/launch_plan.h"

#include <optional>

#include "model/error.h"
#include "os/launch.h"
#include "resolve/resolve_mapping.h"

namespace gpumap {

std::vector<std::string> rank_slice(const std::vector<std::string>& view, const LocalRank& rank, size_t per_rank) {
  size_t r = rank.value.value_or(0);
  size_t first = r * per_rank, last = first + per_rank;
  if (last > view.size())
    throw Error(kExitUnavailable,
                "bind: local rank " + std::to_string(r) + " (" + rank.variable + ") needs cuda:" + std::to_string(first) +
                    (per_rank > 1 ? "-" + std::to_string(last - 1) : "") + " but this job sees " +
                    std::to_string(view.size()) + " GPU" + (view.size() == 1 ? "" : "s"),
                "give the job more GPUs, start fewer ranks per node, or give each rank fewer GPUs");
  return {view.begin() + static_cast<long>(first), view.begin() + static_cast<long>(last)};
}

RankGpus bind_rank(const std::vector<std::string>& view, const LocalRank& rank, size_t per_rank, bool keep_visible) {
  RankGpus b;
  b.own = rank_slice(view, rank, per_rank);
  b.visible = b.own;
  if (keep_visible) {
    size_t first = rank.value.value_or(0) * per_rank;
    b.visible.assign(view.begin() + static_cast<long>(first), view.end());
    b.visible.insert(b.visible.end(), view.begin(), view.begin() + static_cast<long>(first));
  }
  return b;
}

CpuChoice cpus_for(const Snapshot& s, const std::vector<std::string>& uuids, const std::vector<int>& inherited) {
  std::vector<std::optional<std::string>> lists;
  for (const std::string& u : uuids) {
    // A CUDA-labelled MIG device ("GPU-" + its 16 bytes) is found under NVML's name.
    Snapshot::DeviceRef ref = s.find_device(u);
    if (!ref.gpu) ref = s.find_device(nvml_uuid_for(s, u));
    lists.push_back(ref.gpu ? ref.gpu->cpu_affinity : std::nullopt);
  }
  CpuChoice c;
  c.cpus = cpus_near(lists, inherited, &c.why_not);
  return c;
}

}  // namespace gpumap
