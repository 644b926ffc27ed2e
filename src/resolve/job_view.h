// `gpumap job`: one Slurm job's GPU processes on every node, from one `gpumap ps --json` per
// node run by Slurm itself (srun --overlap into the job), joined with the job's allocation
// from `scontrol show job -d`.  Pure: the command lines are built here, the outputs come in
// as text (tests need neither Slurm nor a driver).  The join gives facts; its rules are in
// findings/job_rules.h.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.h"

namespace gpumap {

/// srun --jobid=J --overlap --nodes=N --ntasks=N --ntasks-per-node=1 [--gres=gpu:G] ... GPUMAP ps
/// --json: one ps per node of the job, each output line labelled with its task number.  `nodes`:
/// the job's node count (parse_job_nodes); without --nodes an srun from outside the job (a login
/// node) starts one task on one node only.  `gpus_per_node`: the job's GPUs on each node
/// (uniform_gpus_per_node); without --gres the step inherits the job's --gpus-per-task, and under
/// device cgroups its ps then sees one GPU per node (both measured, Slurm 22.05).  0: left to
/// srun.  `extra` goes after `ps --json` (--simulate X).
std::vector<std::string> job_fanout_argv(const std::string& srun, const std::string& job_id, const std::string& gpumap,
                                         const std::vector<std::string>& extra = {}, size_t nodes = 0,
                                         size_t gpus_per_node = 0);

/// The one GPU count every node in `nodes` holds in `allocation` (parse_job_gpu_ids); 0 when the
/// nodes differ, one is not listed, or they hold none (one srun cannot ask for different counts).
size_t uniform_gpus_per_node(const std::map<std::string, std::vector<uint32_t>>& allocation,
                             const std::vector<std::string>& nodes);

/// srun --label output ("0: text") split per task number; unlabelled lines are dropped.
std::map<int, std::string> split_labelled_output(const std::string& out);

/// "node[01-03,07],gpu5" -> node01 node02 node03 node07 gpu5 (Slurm's hostlist syntax, one
/// bracket per name).  Malformed pieces come back unexpanded.
std::vector<std::string> expand_hostlist(const std::string& list);

/// Per node, the Slurm GPU ids the job holds there, from `scontrol show job -d J`
/// ("Nodes=n[1-2] CPU_IDs=0-3 Mem=0 GRES=gpu:a100:2(IDX:0,2-3)").  Empty when it says none.
std::map<std::string, std::vector<uint32_t>> parse_job_gpu_ids(const std::string& scontrol_text);

/// The job's nodes, from `scontrol show job`'s NodeList= (hostlist expanded, in Slurm's order).
/// Empty when it names none (a pending job: NodeList=(null)).
std::vector<std::string> parse_job_nodes(const std::string& scontrol_text);

struct JobGpu {
  std::string node;
  uint32_t nvml_index = 0;       // as nvidia-smi shows it on that node (inside the step's device cgroup, if any)
  std::string uuid, pci_bus_id;
  std::optional<uint32_t> minor_number;  // /dev/nvidiaN
  bool allocated = false;        // to this job (false also when the allocation is unknown)
};

struct JobProcess {
  std::string node;
  std::optional<std::string> rank;  // SLURM_PROCID from the process's environment
  uint32_t pid = 0;
  uint32_t nvml_index = 0;
  std::string uuid;
  std::optional<int> cuda_ordinal;        // the cuda:N this rank calls the GPU
  std::optional<std::string> rank_variable;  // its local-rank variable (SLURM_LOCALID, LOCAL_RANK, ...)
  std::optional<uint32_t> local_rank;        // that variable's value
  std::optional<size_t> cuda_device_count;   // how many GPUs its CUDA sees
  std::optional<uint32_t> rank_nvml_index;   // the nvidia-smi GPU its cuda:{local_rank} is (cuda:0 when bound), on its node
  std::optional<size_t> bound_own_gpus;      // gpumap bind gave it its own GPUs first: how many (ps's bound_own_gpus)
  std::optional<uint64_t> used_memory_mib;
  std::optional<std::string> command;
};

struct JobReport {
  std::string job_id;
  std::vector<std::string> nodes;      // that answered
  std::vector<JobProcess> processes;   // node order, then GPU, then pid
  std::vector<JobGpu> gpus;            // every GPU each node's ps step saw
  bool allocation_known = false;       // scontrol named the job's GPU ids on every answering node
  size_t other_processes = 0;          // on these GPUs but not of this job
  std::vector<std::string> node_errors;  // "task 1: ..." for nodes whose ps failed
  std::vector<std::string> missing_nodes;  // of the job, but no ps report came from them (it did not
                                           // answer: slurmd down, a hung node; or its ps failed)
  std::vector<Finding> findings;       // filled by findings/job_rules.h (job_findings)
};

/// Joins each node's `gpumap ps --json` document (task number -> text) with the allocation
/// (node -> Slurm GPU ids; a Slurm GPU id is a position in gres.conf, taken as the device
/// minor number, which holds for `File=/dev/nvidia[0-N]` and AutoDetect).  `job_nodes`
/// (parse_job_nodes) are the nodes that should answer: those that did not are missing_nodes.
/// No findings: findings/job_rules.h makes them, session/ps.h's build_job_report does both.
JobReport join_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation,
                           const std::vector<std::string>& job_nodes = {});

}  // namespace gpumap
