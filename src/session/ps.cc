#include "session/ps.h"

#include "findings/job_rules.h"
#include "findings/ps_rules.h"
#include "os/proc.h"

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

JobReport build_job_report(const std::string& job_id, const std::map<int, std::string>& ps_per_task,
                           const std::map<std::string, std::vector<uint32_t>>& allocation) {
  JobReport r = join_job_report(job_id, ps_per_task, allocation);
  r.findings = job_findings(r);
  return r;
}

}  // namespace gpumap
