// `gpumap ps` and `gpumap job` as operations: the join (resolve/process_view.h,
// resolve/job_view.h) and its findings (findings/ps_rules.h, findings/job_rules.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "resolve/job_view.h"
#include "resolve/process_view.h"

namespace gpumap {

class ProcFs;

/// Whether NVML's PIDs can be looked up in `proc`: NVML reports PIDs of the init namespace, a
/// simulated host's PIDs are this /proc's own; `nvml_pid_ns` (Seams::nvml_pid_ns,
/// GPUMAP_NVML_PID_NS) names NVML's namespace explicitly ("pid:[...]"), for tests.
PidNamespaceView pid_namespace_view(const ProcFs& proc, bool simulated, const std::optional<std::string>& nvml_pid_ns);

/// Every process row, with its facts and its findings.
PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of);

/// One job's report across its nodes (join_job_report's arguments), with its findings.
JobReport build_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation);

}  // namespace gpumap
