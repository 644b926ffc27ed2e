// `gpumap ps` and `gpumap job` as operations: the join (resolve/process_view.h,
// resolve/job_view.h) and its findings (findings/ps_rules.h, findings/job_rules.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "answer/ps_answer.h"
#include "os/proc.h"
#include "resolve/job_view.h"
#include "resolve/pod_join.h"
#include "resolve/process_view.h"
#include "session/kubelet_cache.h"
#include "session/session.h"

namespace gpumap {

class ProcFs;

/// Whether NVML's PIDs can be looked up in `proc`: NVML reports PIDs of the init namespace, a
/// simulated host's PIDs are this /proc's own; `nvml_pid_ns` (Seams::nvml_pid_ns,
/// GPUMAP_NVML_PID_NS) names NVML's namespace explicitly ("pid:[...]"), for tests.
PidNamespaceView pid_namespace_view(const ProcFs& proc, bool simulated, const std::optional<std::string>& nvml_pid_ns);

/// What the kubelet says (asked only when some process runs in a pod: `uids`, their pods' cgroup
/// UIDs); null: no answer.
using PodsOf = std::function<const PodResources*(const std::set<std::string>& uids)>;

/// Every process row, with its facts and its findings; the pods of those in one named from
/// `pods` (resolve/pod_join.h) when given, and, with `view_in`, each containerised process's
/// cuda:N as CUDA numbers its GPUs inside its container (container_cuda_views).
PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of,
                  const PodsOf& pods = {}, const ViewIn& view_in = {});

/// What a ps frame reads from the driver: the defaults and each process's utilisation.  The
/// session's first snapshot is the one every later call gets: a front end that reads it before
/// read_ps_frame (cmd_ps, top) asks with these.
inline ReadOptions ps_read_options() {
  ReadOptions o;
  o.process_utilization = true;
  return o;
}

/// Whose leases a frame reads: the GPUs that have a process row (ps), or every GPU (metrics).
enum class LeasesOf { kRows, kEveryGpu };

/// build_ps on the session's snapshot (each process's view by Session::mapping, predicted), with
/// the leases of `leases_of`; processes read from `proc`.
/// `view_of`, when given, replaces Session::mapping (metrics: a failed CUDA probe is caught there).
/// `read`, when given, reads each process instead of proc.read (top: a cache across frames).
/// `kubelet`, when given, is the kubelet's answer already asked (`pods`): not asked again;
/// `kubelets`, when given, keeps the answer across a monitor's frames (session/kubelet_cache.h).
PsFrame read_ps_frame(Session& session, const ProcFs& proc, LeasesOf leases_of = LeasesOf::kRows, const ViewOf& view_of = {},
                      const ReadProc& read = {}, const KubeletReply* kubelet = nullptr, KubeletCache* kubelets = nullptr);
/// The same with the session's /proc (Seams::proc_root).
PsFrame read_ps_frame(Session& session, LeasesOf leases_of = LeasesOf::kRows);

/// Checks `filter` against the snapshot: Error(kExitUsage) naming a GPU spec that names no GPU
/// (select_gpus' message, listing the host's GPUs), an empty user or job.
void check_ps_filter(const Snapshot& s, const PsFilter& filter);
/// Keeps the rows `filter` matches, and the GPU findings that concern a kept row (positions in
/// each row's gpu_findings renumbered); leases of GPUs left without a row are dropped.
void filter_ps_frame(const Snapshot& s, const PsFilter& filter, PsFrame& frame);
/// --pid's values (each a PID or a comma list of them); Error(kExitUsage) naming a bad one.
std::vector<uint32_t> parse_ps_pids(const std::vector<std::string>& values);
/// --fail-on's value: warning or error; nullopt when not given; Error(kExitUsage) otherwise.
std::optional<Severity> parse_fail_on(const std::optional<std::string>& value);
/// The worst severity among a frame's findings (rows' and GPUs'); kInfo when none.
Severity ps_worst(const PsResult& res);
/// read_ps_frame(session) filtered (`kubelets`: the kubelet's answer across `--watch` frames).
PsFrame read_ps_frame(Session& session, const PsFilter& filter, KubeletCache* kubelets = nullptr);

/// One job's report across its nodes (join_job_report's arguments), with its findings.
JobReport build_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation,
                           const std::vector<std::string>& job_nodes = {});

}  // namespace gpumap
