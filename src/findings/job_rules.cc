#include "findings/job_rules.h"

#include <algorithm>
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
// A rank finding with the GPUs it names as not the rank's own: (node, nvml index) of each.
struct PlacedFinding {
  Finding finding;
  uint32_t pid = 0;
  std::string node;
  std::set<uint32_t> others;  // nvidia-smi indices on `node`
};

void rank_gpu_findings(const JobReport& r, std::vector<PlacedFinding>& out) {
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
    for (RankFinding& f : rank_findings(rp)) {
      PlacedFinding placed{std::move(f.finding), first.pid, first.node, {}};
      for (size_t i : f.others) placed.others.insert(rp.held[i].nvml_index);
      out.push_back(std::move(placed));
    }
  }
}

}  // namespace

std::vector<Finding> job_findings(const JobReport& r) {
  // The ranks' own findings first: a GPU shared only through stray contexts, or by ranks that work
  // on another rank's GPU, is one cause, said once (findings/fold.cc's rows for ps, the same here).
  std::vector<PlacedFinding> ranked;
  rank_gpu_findings(r, ranked);
  auto names = [&](const PlacedFinding& f, const JobGpu& g) { return f.node == g.node && f.others.count(g.nvml_index); };
  std::vector<Finding> out;
  for (const JobGpu& g : r.gpus) {
    std::set<std::string> ranks, strays;
    for (const JobProcess& p : r.processes) {
      if (p.node != g.node || !same_uuid(p.uuid, g.uuid)) continue;
      ranks.insert(p.rank.value_or("?"));
      for (const PlacedFinding& f : ranked)
        if (f.finding.id == "stray-context" && f.pid == p.pid && names(f, g)) strays.insert(p.rank.value_or("?"));
    }
    std::set<std::string> working;  // the ranks that work on this GPU (not only a stray context)
    for (const std::string& k : ranks)
      if (!strays.count(k)) working.insert(k);
    if (ranks.size() > 1 && working.size() <= 1) {
      // Only stray contexts share it: each stray-context finding says so ("also", as ps does).
      for (PlacedFinding& f : ranked)
        if (f.finding.id == "stray-context" && names(f, g))
          f.finding.also.push_back({"job-ranks-share-gpu", "its stray context shares " + gpu_words(g) + " with rank(s) " +
                                                               join(std::vector<std::string>(working.begin(), working.end()), ", ")});
    } else if (ranks.size() > 1) {
      std::vector<std::string> rs(ranks.begin(), ranks.end());
      Finding share{"job-ranks-share-gpu", Severity::kWarning,
                    "ranks " + join(rs, ", ") + " of job " + r.job_id + " all run on " + gpu_words(g) +
                        ": they share its memory and compute, and the ranks' own GPUs sit elsewhere",
                    "",  // the fix is the job's own srun line
                    "give each rank its own GPU: start the ranks with `srun ... gpumap bind -- <your command>`, or have "
                    "each rank use cuda:$SLURM_LOCALID"};
      // A rank working here on another rank's GPU is one of the ranks that share it: folded in.
      for (PlacedFinding& f : ranked)
        if (f.finding.id == "rank-on-wrong-gpu" && names(f, g)) {
          share.severity = std::max(share.severity, f.finding.severity);
          share.also.push_back({f.finding.id, f.finding.message});
          f.finding.id.clear();  // said with the GPU's finding
        }
      out.push_back(std::move(share));
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
  for (PlacedFinding& f : ranked)
    if (!f.finding.id.empty()) out.push_back(std::move(f.finding));
  return out;
}

}  // namespace gpumap
