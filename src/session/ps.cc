#include "session/ps.h"

#include "findings/fail_on.h"
#include "findings/job_rules.h"
#include "findings/ps_rules.h"
#include "os/host_id.h"
#include "os/lease.h"
#include "os/proc.h"
#include "model/error.h"
#include "resolve/gpu_selector.h"
#include "resolve/pod_join.h"
#include "session/kubelet.h"
#include "findings/severity.h"
#include "model/text.h"

#include <algorithm>
#include <set>

namespace gpumap {

PidNamespaceView pid_namespace_view(const ProcFs& proc, bool simulated, const std::optional<std::string>& nvml_pid_ns) {
  std::optional<std::string> nvml = nvml_pid_ns;
  if (!nvml && !simulated) nvml = kInitPidNamespace;
  return classify_pid_namespace(nvml, proc.pid_ns_link("1"), proc.pid_ns_link("self"), proc.nspid("self"));
}

PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of,
                  const PodsOf& pods, const ViewIn& view_in) {
  PsResult res = join_ps(s, ns, read, view_of);
  std::set<std::string> uids;
  for (const ProcessRow& r : res.rows)
    if (r.pod) uids.insert(r.pod->uid);
  if (!uids.empty() && pods)
    if (const PodResources* p = pods(uids)) name_pods(res.rows, *p, s);
  if (view_in) container_cuda_views(res, s, view_in);
  add_ps_findings(s, ns, res);
  return res;
}

PsFrame read_ps_frame(Session& session, const ProcFs& proc, LeasesOf leases_of, const ViewOf& view_of,
                      const ReadProc& read, const KubeletReply* kubelet, KubeletCache* kubelets) {
  const Snapshot& s = session.snapshot(ps_read_options());
  PsFrame f;
  f.proc_root = proc.root();
  f.host = read_hostname();
  f.slurm_node = session.env().get("SLURMD_NODENAME");
  f.ns = pid_namespace_view(proc, s.simulated, session.seams().nvml_pid_ns);
  f.result = build_ps(
      s, f.ns, read ? read : ReadProc([&](uint32_t pid) { return proc.read(pid); }),
      view_of ? view_of : ViewOf([&](const Environment& e) { return session.mapping(e, false).view; }),
      [&](const std::set<std::string>& uids) -> const PodResources* {  // asked once a process is found in a pod
        f.kubelet = kubelet    ? *kubelet
                    : kubelets ? kubelets->reply(session.seams(), uids)
                               : ask_kubelet(session.seams());
        return f.kubelet->pods ? &*f.kubelet->pods : nullptr;
      },
      [&](const Snapshot& inside, const Environment& e) { return session.mapping_in(inside, e).view; });
  if (kubelets) {  // what this frame's answer named, for the next frame's
    std::set<std::string> uids, named;
    for (const ProcessRow& r : f.result.rows)
      if (r.pod) {
        uids.insert(r.pod->uid);
        if (!r.pod->name.empty()) named.insert(r.pod->uid);
      }
    kubelets->seen(uids, named);
  }
  // Leases: one read per GPU.
  const std::string dir = session.lease_dir();
  auto add_lease = [&](const std::string& uuid) {
    if (uuid.empty() || f.leases.count(uuid)) return;  // a GPU NVML could not name has no lease
    try {
      f.leases[uuid] = read_lease(dir, uuid);
    } catch (const Error&) {
      f.leases[uuid] = std::nullopt;
    }
  };
  for (const ProcessRow& r : f.result.rows) add_lease(r.uuid);
  if (leases_of == LeasesOf::kEveryGpu)
    for (const Gpu& g : s.gpus) add_lease(g.uuid);
  return f;
}

PsFrame read_ps_frame(Session& session, LeasesOf leases_of) {
  ProcFs proc(session.seams().proc_root);
  return read_ps_frame(session, proc, leases_of);
}

void check_ps_filter(const Snapshot& s, const PsFilter& filter) {
  for (const std::string& u : filter.users)
    if (u.empty()) throw Error(kExitUsage, "ps: --user is empty", "give a user name or a numeric UID: gpumap ps --user alice");
  for (const std::string& j : filter.jobs)
    if (j.empty()) throw Error(kExitUsage, "ps: --job is empty", "give a Slurm job id: gpumap ps --job 1234");
  select_gpus(s, filter.gpus);  // throws naming the spec and listing the host's GPUs
}

namespace {

bool keep_row(const ProcessRow& r, const PsFilter& f, const std::set<uint32_t>& gpus) {
  if (!f.gpus.empty() && !gpus.count(r.nvml_index)) return false;
  if (!f.pids.empty() && std::none_of(f.pids.begin(), f.pids.end(), [&](uint32_t p) {
        return p == r.pid || (r.local_pid && *r.local_pid == p);
      }))
    return false;
  if (!f.users.empty() && std::none_of(f.users.begin(), f.users.end(), [&](const std::string& u) {
        if (r.user && *r.user == u) return true;
        return r.uid && !u.empty() && u.find_first_not_of("0123456789") == std::string::npos && u.size() <= 10 &&
               std::stoull(u) == *r.uid;
      }))
    return false;
  if (!f.jobs.empty() && std::none_of(f.jobs.begin(), f.jobs.end(), [&](const std::string& j) {
        return r.slurm_job_id && *r.slurm_job_id == j;
      }))
    return false;
  return true;
}

}  // namespace

void filter_ps_frame(const Snapshot& s, const PsFilter& filter, PsFrame& frame) {
  if (filter.empty()) return;
  std::set<uint32_t> gpus;
  for (const Gpu* g : select_gpus(s, filter.gpus)) gpus.insert(g->nvml_index);
  PsResult& res = frame.result;
  std::vector<ProcessRow> rows;
  for (ProcessRow& r : res.rows)
    if (keep_row(r, filter, gpus)) rows.push_back(std::move(r));
  // The GPU findings a kept row refers to, renumbered in their order.
  std::vector<size_t> renumber(res.gpu_findings.size(), SIZE_MAX);
  for (const ProcessRow& r : rows)
    for (size_t i : r.gpu_findings)
      if (i < renumber.size()) renumber[i] = 0;
  std::vector<GpuFinding> kept;
  for (size_t i = 0; i < res.gpu_findings.size(); ++i)
    if (renumber[i] != SIZE_MAX) {
      renumber[i] = kept.size();
      kept.push_back(std::move(res.gpu_findings[i]));
    }
  for (ProcessRow& r : rows)
    for (size_t& i : r.gpu_findings) i = renumber[i];
  res.rows = std::move(rows);
  res.gpu_findings = std::move(kept);
  if (!filter.gpus.empty()) {
    std::vector<uint32_t> unlisted;
    for (uint32_t i : res.unlisted_gpus)
      if (gpus.count(i)) unlisted.push_back(i);
    res.unlisted_gpus = unlisted;
  }
  std::set<std::string> uuids;
  for (const ProcessRow& r : res.rows) uuids.insert(r.uuid);
  for (auto it = frame.leases.begin(); it != frame.leases.end();)
    it = uuids.count(it->first) ? std::next(it) : frame.leases.erase(it);
}

std::vector<uint32_t> parse_ps_pids(const std::vector<std::string>& values) {
  std::vector<uint32_t> pids;
  for (const std::string& v : values)
    for (const std::string& one : split(v, ',')) {
      uint32_t pid = 0;
      if (!parse_small_uint(one, pid) || pid == 0)
        throw Error(kExitUsage, "ps: --pid `" + printable(one) + "` is not a process id",
                    "give a PID (a positive number) or a comma list: gpumap ps --pid 1234,5678");
      pids.push_back(pid);
    }
  return pids;
}

std::optional<Severity> parse_fail_on(const std::optional<std::string>& value) { return parse_fail_on_severity("ps", value); }

Severity ps_worst(const PsResult& res) {
  Severity w = Severity::kInfo;
  for (const ProcessRow& r : res.rows) w = std::max(w, worst(r.findings));
  for (const GpuFinding& g : res.gpu_findings) w = std::max(w, g.finding.severity);
  return w;
}

PsFrame read_ps_frame(Session& session, const PsFilter& filter, KubeletCache* kubelets) {
  ProcFs proc(session.seams().proc_root);
  PsFrame f = read_ps_frame(session, proc, LeasesOf::kRows, {}, {}, nullptr, kubelets);
  filter_ps_frame(session.snapshot(), filter, f);
  return f;
}

JobReport build_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation,
                           const std::vector<std::string>& job_nodes) {
  JobReport r = join_job_report(job_id, ps_per_task, allocation, job_nodes);
  r.findings = job_findings(r);
  return r;
}

}  // namespace gpumap
