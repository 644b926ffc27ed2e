#include "findings/job_rules.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "findings/rank_rules.h"
#include "model/text.h"
#include "model/uuid.h"

namespace gpumap {
namespace {

std::string gpu_words(uint32_t nvml_index, const std::string& uuid, const std::string& node) {
  return "nvidia-smi GPU " + std::to_string(nvml_index) + " (" + uuid + ")" + " on " + node;
}

std::string gpu_words(const JobGpu& g) { return gpu_words(g.nvml_index, g.uuid, g.node); }

// rank-on-wrong-gpu and stray-context (findings/rank_rules.h) for each process of the job, from
// the rows its node's ps gave (one per GPU it is on).
void rank_gpu_findings(const JobReport& r, std::vector<Finding>& out) {
  std::map<std::pair<std::string, uint32_t>, std::vector<const JobProcess*>> rows_of;  // (node, pid) -> rows
  std::vector<std::pair<std::string, uint32_t>> order;
  for (const JobProcess& p : r.processes) {
    if (!p.rank_variable || !p.local_rank || !p.cuda_device_count) continue;
    auto& rows = rows_of[{p.node, p.pid}];
    if (rows.empty()) order.emplace_back(p.node, p.pid);
    rows.push_back(&p);
  }
  for (const auto& key : order) {
    const std::vector<const JobProcess*>& rows = rows_of[key];
    const JobProcess& first = *rows.front();
    RankedProcess rp;
    rp.who = "rank " + first.rank.value_or("?") + " (pid " + std::to_string(first.pid) + ") on " + first.node;
    rp.variable = *first.rank_variable;
    rp.rank = *first.local_rank;
    rp.cuda_devices = *first.cuda_device_count;
    rp.own_index = first.rank_nvml_index;
    rp.bound_own = first.bound_own_gpus;
    if (rp.own_index) {
      rp.own_gpu = gpu_words(*rp.own_index, "?", first.node);
      for (const JobGpu& g : r.gpus)
        if (g.node == first.node && g.nvml_index == *rp.own_index) rp.own_gpu = gpu_words(g);
    }
    for (const JobProcess* p : rows)
      rp.held.push_back({p->nvml_index, gpu_words(p->nvml_index, p->uuid, p->node), p->cuda_ordinal, p->used_memory_mib});
    for (RankFinding& f : rank_findings(rp)) out.push_back(std::move(f.finding));
  }
}

}  // namespace

std::vector<Finding> job_findings(const JobReport& r) {
  std::vector<Finding> out;
  for (const JobGpu& g : r.gpus) {
    std::set<std::string> ranks;
    for (const JobProcess& p : r.processes)
      if (p.node == g.node && same_uuid(p.uuid, g.uuid)) ranks.insert(p.rank.value_or("?"));
    if (ranks.size() > 1) {
      std::vector<std::string> rs(ranks.begin(), ranks.end());
      out.push_back({"job-ranks-share-gpu", Severity::kWarning,
                     "ranks " + join(rs, ", ") + " of job " + r.job_id + " all run on " + gpu_words(g) +
                         ": they share its memory and compute, and the ranks' own GPUs sit elsewhere",
                     "",  // the fix is the job's own srun line
                     "give each rank its own GPU: start the ranks with `srun ... gpumap bind -- <your command>`, or have "
                     "each rank use cuda:$SLURM_LOCALID"});
    }
    if (r.allocation_known && !g.allocated && !ranks.empty()) {
      std::vector<std::string> rs(ranks.begin(), ranks.end());
      out.push_back({"job-gpu-outside-allocation", Severity::kError,
                     "rank(s) " + join(rs, ", ") + " of job " + r.job_id + " run on " + gpu_words(g) +
                         ", which Slurm did not allocate to this job: another job may be given it",
                     "",  // the fix is in the program
                     "use only the GPUs the step sees, numbered from 0 (cuda:0..); never take GPU numbers from "
                     "nvidia-smi or $SLURM_JOB_GPUS"});
    }
    if (r.allocation_known && g.allocated && ranks.empty())
      out.push_back({"job-gpu-idle", Severity::kWarning,
                     gpu_words(g) + " is allocated to job " + r.job_id + " but none of its processes uses it",
                     "",  // the fix is the job's own sbatch/srun line
                     "ask for fewer GPUs, or start one rank per GPU: `srun -n <GPUs> ... gpumap bind -- <your command>`"});
  }
  rank_gpu_findings(r, out);
  return out;
}

}  // namespace gpumap
