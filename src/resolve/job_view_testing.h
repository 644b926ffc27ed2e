// Test fixture for the job join and its rules (job_view_test.cc, findings/job_rules_test.cc).
#pragma once
#include <string>
#include <tuple>
#include <vector>

namespace gpumap::testing_job {

// One node's `gpumap ps --json`: GPUs 0-3 (minor = index), processes as (pid, gpu, job, rank).
inline std::string ps_doc(const std::string& node, const std::vector<std::tuple<int, int, std::string, std::string>>& procs) {
  std::string gpus, rows;
  for (int i = 0; i < 4; ++i)
    gpus += std::string(i ? "," : "") + "{\"nvml_index\": " + std::to_string(i) + ", \"uuid\": \"GPU-" +
            std::to_string(i) + "\", \"pci_bus_id\": \"x\", \"minor_number\": " + std::to_string(i) + "}";
  for (auto& [pid, gpu, job, rank] : procs)
    rows += std::string(rows.empty() ? "" : ",") + "{\"pid\": " + std::to_string(pid) + ", \"nvml_index\": " +
            std::to_string(gpu) + ", \"uuid\": \"GPU-" + std::to_string(gpu) + "\", \"used_memory_mib\": 100, " +
            "\"slurm_job_id\": \"" + job + "\", \"slurm_procid\": \"" + rank + "\", \"ordinal\": 0}";
  return "{\"host\": \"h\", \"slurm_node\": \"" + node + "\", \"gpus\": [" + gpus + "], \"processes\": [" + rows + "]}";
}

}  // namespace gpumap::testing_job
