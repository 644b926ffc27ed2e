#include "session/ps.h"

#include "findings/job_rules.h"
#include "findings/ps_rules.h"
#include "os/host_id.h"
#include "os/proc.h"
#include "model/error.h"

namespace gpumap {

PidNamespaceView pid_namespace_view(const ProcFs& proc, bool simulated, const std::optional<std::string>& nvml_pid_ns) {
  std::optional<std::string> nvml = nvml_pid_ns;
  if (!nvml && !simulated) nvml = kInitPidNamespace;
  return classify_pid_namespace(nvml, proc.pid_ns_link("1"), proc.pid_ns_link("self"), proc.nspid("self"));
}

PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of) {
  PsResult res = join_ps(s, ns, read, view_of);
  add_ps_findings(s, ns, res);
  return res;
}

PsFrame read_ps_frame(Session& session, const ProcFs& proc, LeasesOf leases_of, const ViewOf& view_of) {
  const Snapshot& s = session.snapshot();
  PsFrame f;
  f.proc_root = proc.root();
  f.host = read_hostname();
  f.slurm_node = session.env().get("SLURMD_NODENAME");
  f.ns = pid_namespace_view(proc, s.simulated, session.seams().nvml_pid_ns);
  f.result = build_ps(
      s, f.ns, [&](uint32_t pid) { return proc.read(pid); },
      view_of ? view_of : ViewOf([&](const Environment& e) { return session.mapping(e, false).view; }));
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

JobReport build_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation,
                           const std::vector<std::string>& job_nodes) {
  JobReport r = join_job_report(job_id, ps_per_task, allocation, job_nodes);
  r.findings = job_findings(r);
  return r;
}

}  // namespace gpumap
