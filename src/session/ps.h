// `gpumap ps` and `gpumap job` as operations: the join (resolve/process_view.h,
// resolve/job_view.h) and its findings (findings/ps_rules.h, findings/job_rules.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "os/lease.h"
#include "os/proc.h"
#include "resolve/job_view.h"
#include "resolve/process_view.h"
#include "session/session.h"

namespace gpumap {

class ProcFs;

/// Whether NVML's PIDs can be looked up in `proc`: NVML reports PIDs of the init namespace, a
/// simulated host's PIDs are this /proc's own; `nvml_pid_ns` (Seams::nvml_pid_ns,
/// GPUMAP_NVML_PID_NS) names NVML's namespace explicitly ("pid:[...]"), for tests.
PidNamespaceView pid_namespace_view(const ProcFs& proc, bool simulated, const std::optional<std::string>& nvml_pid_ns);

/// Every process row, with its facts and its findings.
PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of);

/// One `ps` frame of a session: the PID-namespace decision, every row with its findings, and
/// the gpumap lease of each GPU that has a row (nullopt: its lock file could not be read).
struct PsFrame {
  std::string proc_root;                   // the /proc read (Seams::proc_root)
  std::string host;                        // this machine's hostname
  std::optional<std::string> slurm_node;   // $SLURMD_NODENAME of the session's environment
  PidNamespaceView ns;
  PsResult result;
  std::map<std::string, std::optional<LeaseState>> leases;  // by UUID
};


/// Whose leases a frame reads: the GPUs that have a process row (ps), or every GPU (metrics).
enum class LeasesOf { kRows, kEveryGpu };

/// build_ps on the session's snapshot (each process's view by Session::mapping, predicted), with
/// the leases of `leases_of`; processes read from `proc`.
/// `view_of`, when given, replaces Session::mapping (metrics: a failed CUDA probe is caught there).
PsFrame read_ps_frame(Session& session, const ProcFs& proc, LeasesOf leases_of = LeasesOf::kRows, const ViewOf& view_of = {});
/// The same with the session's /proc (Seams::proc_root).
PsFrame read_ps_frame(Session& session, LeasesOf leases_of = LeasesOf::kRows);

/// One job's report across its nodes (join_job_report's arguments), with its findings.
JobReport build_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation,
                           const std::vector<std::string>& job_nodes = {});

}  // namespace gpumap
