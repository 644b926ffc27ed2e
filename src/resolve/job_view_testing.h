// Test fixture for the job join and its rules (job_view_test.cc, findings/job_rules_test.cc).
#pragma once
#include <string>
#include <tuple>
#include <vector>

namespace gpumap::testing_job {

// One node's `gpumap ps --json` with GPUs 0-3 (minor = index, UUID GPU-<index>) and these process rows.
inline std::string ps_doc_rows(const std::string& node, const std::string& rows) {
  std::string gpus;
  for (int i = 0; i < 4; ++i)
    gpus += std::string(i ? "," : "") + "{\"nvml_index\": " + std::to_string(i) + ", \"uuid\": \"GPU-" +
            std::to_string(i) + "\", \"pci_bus_id\": \"x\", \"minor_number\": " + std::to_string(i) + "}";
  return "{\"host\": \"h\", \"slurm_node\": \"" + node + "\", \"gpus\": [" + gpus + "], \"processes\": [" + rows + "]}";
}

inline std::string row_start(int pid, int gpu, const std::string& job, const std::string& rank, int mib) {
  return "{\"pid\": " + std::to_string(pid) + ", \"nvml_index\": " + std::to_string(gpu) + ", \"uuid\": \"GPU-" +
         std::to_string(gpu) + "\", \"used_memory_mib\": " + std::to_string(mib) + ", \"slurm_job_id\": \"" + job +
         "\", \"slurm_procid\": \"" + rank + "\"";
}

// Processes as (pid, gpu, job, rank): 100 MiB each, no local rank.
inline std::string ps_doc(const std::string& node, const std::vector<std::tuple<int, int, std::string, std::string>>& procs) {
  std::string rows;
  for (auto& [pid, gpu, job, rank] : procs)
    rows += std::string(rows.empty() ? "" : ",") + row_start(pid, gpu, job, rank, 100) + ", \"cuda_ordinal\": 0}";
  return ps_doc_rows(node, rows);
}

// A row of job 5 with its local rank, as ps gives it: SLURM_LOCALID = `local`, its CUDA sees `sees` GPUs
// (cuda:N = GPU N), so its cuda:{local} is GPU `local` and this GPU is its cuda:{gpu}.
struct RankRow {
  int pid, gpu;
  std::string rank;
  int local, sees, mib;
};

inline std::string ps_doc_ranks(const std::string& node, const std::vector<RankRow>& procs) {
  std::string rows;
  for (const RankRow& p : procs)
    rows += std::string(rows.empty() ? "" : ",") + row_start(p.pid, p.gpu, "5", p.rank, p.mib) +
            ", \"cuda_ordinal\": " + (p.gpu < p.sees ? std::to_string(p.gpu) : "null") +
            ", \"rank_variable\": \"SLURM_LOCALID\", \"rank_value\": " + std::to_string(p.local) +
            ", \"cuda_device_count\": " + std::to_string(p.sees) +
            ", \"rank_nvml_index\": " + (p.local < p.sees ? std::to_string(p.local) : "null") + "}";
  return ps_doc_rows(node, rows);
}

}  // namespace gpumap::testing_job
