// `gpumap fleet`'s answer: every node a Prometheus scrapes `gpumap serve` on, its GPUs and their
// processes (each with its own cuda:N), the findings grouped by cause and the Slurm jobs across
// nodes (session/fleet.h reads it from Prometheus, output/fleet_view.h draws it).  A label the
// exporter did not send (a series budget may drop `command`) is std::nullopt: shown as unknown.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.h"

namespace gpumap {

/// Which processes an answer lists (--processes).  Every one costs Prometheus a series to answer
/// and gpumap one to parse: at 1 000 nodes of 64 processes, listing all of them is most of the
/// whole view's time (docs/fleet.md, "Scale"), and no screen shows 64 000 rows.
enum class FleetProcessList {
  kAuto,          // every process when the answer has at most kFleetListLimit, else as kWithFindings
  kAll,           // every process, however many
  kWithFindings,  // each GPU's count; only the processes with a warning or error finding listed
};
constexpr long long kFleetListLimit = 2000;  // GPU processes (one per pid and GPU)
/// How far back a down node's last read is looked for (after the hour every view asks): older, or
/// none, is "never read".
constexpr int kFleetLongLookbackDays = 14;

/// The filters asked for (each list: any of its values).
struct FleetFilter {
  std::vector<std::string> nodes;       // instance, or its host part without the port
  std::vector<std::string> jobs;        // slurm_job_id
  std::vector<std::string> users;       // the process's user
  std::vector<std::string> gpu_models;  // a case-insensitive part of the GPU's name
  bool info = false;                    // -v: info findings too (else only counted by id: hidden_info)
  bool narrows_content() const { return !jobs.empty() || !users.empty() || !gpu_models.empty(); }
};

struct FleetProcess {
  std::optional<long long> pid;           // as NVML reports it on its node (a host PID)
  std::string type;                       // compute / graphics ("" when the label is missing)
  std::optional<std::string> user, command;
  std::optional<int> cuda_ordinal;        // the cuda:N this process calls this GPU; none: it cannot see it or unknown
  bool sees_no_gpu = false;               // cuda_ordinal="none": its CUDA does not see this GPU (known, not unknown)
  std::string state;                      // running / exited / not-visible ("" when missing)
  std::string slurm_job_id, rank, local_rank;  // "" when not in a job (or the label was dropped)
  std::string pod, ns, container;         // "" outside a pod
  std::vector<std::string> findings;      // ids of its findings on this GPU
};

struct FleetGpu {
  std::string uuid;
  std::optional<int> nvml_index;
  std::optional<std::string> name;
  std::optional<double> memory_used_bytes, memory_total_bytes, utilization_ratio, temperature_celsius;
  long long process_count = 0;          // its processes (one per pid), listed or not
  bool process_count_known = true;      // false: Prometheus answered a count that is none (1e300, 2.5, -1): shown as ?
  std::vector<FleetProcess> processes;  // by pid: every one, or those with findings (FleetAnswer::listed)
};

struct FleetNode {
  std::string instance;   // Prometheus's target label (host:port)
  std::string node;       // the instance without its port
  std::string job;        // the scrape job
  bool up = false;        // the last scrape succeeded (`up == 1`) and it exports gpumap's series; false: DOWN
  /// Why it is DOWN: "" when up, "scrape_failed" (`up == 0`: its last scrape failed, or it never
  /// came up), "no_gpumap_series" (scraped, but none of gpumap's series: not `gpumap serve`),
  /// "not_in_answer" (read within the hour, absent from a partial answer: its store or shard did
  /// not answer).
  std::string down_reason;
  std::optional<double> last_read_age_s;  // now - the exporter's last good driver read; none: never read in the lookback
  std::optional<bool> exporter_up;        // gpumap_exporter_up: the node's last driver read succeeded
  std::optional<bool> exporter_stale;     // gpumap_exporter_stale: its series come from an older read
  std::vector<FleetGpu> gpus;             // by nvml_index
  std::vector<std::string> host_findings; // ids of the node's own findings (no pid)
};

/// One place a finding was reported.
struct FleetFindingPlace {
  std::string instance, node;
  std::optional<long long> pid;
  std::string uuid;
  std::string slurm_job_id;  // the process's job, "" for none
};

/// One cause (finding id) across the fleet, with every place it was reported.
struct FleetCause {
  std::string id;
  Severity severity = Severity::kInfo;
  std::vector<FleetFindingPlace> places;
};

/// One rank of a job: a process on one node, with every GPU it uses.
struct FleetRankGpu {
  std::string uuid;
  std::optional<int> nvml_index;
  std::optional<int> cuda_ordinal;
  bool sees_no_gpu = false;  // as FleetProcess::sees_no_gpu
};
struct FleetRank {
  std::string instance, node;
  std::optional<long long> pid;
  std::string rank, local_rank;
  std::optional<std::string> user;
  std::vector<FleetRankGpu> gpus;
};

/// A Slurm job across nodes: its ranks on every node are one job.
struct FleetJob {
  std::string slurm_job_id;
  std::vector<std::string> nodes;           // sorted
  long long gpu_processes = 0;              // its processes counted once per GPU (as nvidia-smi lists them), listed or not
  bool gpu_processes_known = true;          // false: a count of it was no count (shown as ?)
  std::vector<FleetRank> ranks;             // by rank, then node, then pid; the listed processes only
  std::vector<std::string> finding_ids;     // the causes its processes are in, sorted
};

struct FleetAnswer {
  std::string prometheus;       // the URL as shown (no credentials are ever in it)
  double evaluated_at = 0;      // Prometheus's evaluation time (seconds since the epoch)
  FleetFilter filter;
  std::vector<FleetNode> nodes;  // by node name, then instance
  std::vector<FleetCause> causes;  // most severe first, then by id
  std::vector<FleetJob> jobs;      // by job id
  /// kAll: every process is in nodes[].gpus[].processes and jobs[].ranks; kWithFindings: only
  /// those with a warning or error finding (the counts are whole either way).
  FleetProcessList listed = FleetProcessList::kAll;
  std::vector<std::string> warnings;  // Prometheus's own warnings and series that could not be placed
  /// The engine answered part of the fleet (a `warnings` array: Thanos's partial response, a store
  /// or shard down; VictoriaMetrics' isPartial): the view is not whole.  Its nodes read within
  /// the hour and absent now are nodes with down_reason "not_in_answer".
  bool partial = false;
  std::vector<std::string> partial_queries;  // which of gpumap's queries came back partial (up, gpus, ...)
  /// Without -v: the info findings not fetched, counted by id (two per process on a busy node:
  /// at 1 000 nodes they were 126 000 of 126 500 finding series and most of the time).
  std::map<std::string, long long> hidden_info;
};

}  // namespace gpumap
