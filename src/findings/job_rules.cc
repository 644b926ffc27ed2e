#include "findings/job_rules.h"

#include <set>
#include <string>

namespace gpumap {
namespace {

// Unlike model/text.h's join, an empty first part still gets its separator (an empty rank shows).
std::string join_str(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string gpu_words(const JobGpu& g) {
  return "nvidia-smi GPU " + std::to_string(g.nvml_index) + " (" + g.uuid + ")" + " on " + g.node;
}

}  // namespace

std::vector<Finding> job_findings(const JobReport& r) {
  std::vector<Finding> out;
  for (const JobGpu& g : r.gpus) {
    std::set<std::string> ranks;
    for (const JobProcess& p : r.processes)
      if (p.node == g.node && p.uuid == g.uuid) ranks.insert(p.rank.value_or("?"));
    if (ranks.size() > 1) {
      std::vector<std::string> rs(ranks.begin(), ranks.end());
      out.push_back({"job-ranks-share-gpu", Severity::kWarning,
                     "ranks " + join_str(rs, ", ") + " of job " + r.job_id + " all run on " + gpu_words(g) +
                         ": they share its memory and compute, and the ranks' own GPUs sit elsewhere",
                     "give each rank its own GPU: srun ... gpumap bind -- CMD   (or use cuda:$SLURM_LOCALID)"});
    }
    if (r.allocation_known && !g.allocated && !ranks.empty()) {
      std::vector<std::string> rs(ranks.begin(), ranks.end());
      out.push_back({"job-gpu-outside-allocation", Severity::kError,
                     "rank(s) " + join_str(rs, ", ") + " of job " + r.job_id + " run on " + gpu_words(g) +
                         ", which Slurm did not allocate to this job: another job may be given it",
                     "use only the GPUs the step sees from 0 (cuda:0..); never take GPU numbers from "
                     "nvidia-smi or $SLURM_JOB_GPUS"});
    }
    if (r.allocation_known && g.allocated && ranks.empty())
      out.push_back({"job-gpu-idle", Severity::kWarning,
                     gpu_words(g) + " is allocated to job " + r.job_id + " but none of its processes uses it",
                     "ask for fewer GPUs, or start one rank per GPU: srun -n <GPUs> ... gpumap bind -- CMD"});
  }
  return out;
}

}  // namespace gpumap
