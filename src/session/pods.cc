#include "session/pods.h"

#include <algorithm>
#include <map>

#include "formats/pod_resources.h"
#include "model/text.h"
#include "os/proc.h"
#include "session/container_facts.h"
#include "session/kubelet.h"
#include "session/ps.h"
#include "session/session.h"

namespace gpumap {

PodsAnswer read_pods(Session& session) {
  PodsAnswer a;
  // A simulated host's kubelet answers from its host file (docs/host-file.md), as gpumap-kubelet would.
  std::string simulated = simulated_kubelet(session.driver());
  if (!simulated.empty()) {
    PodResourcesRead read = parse_pod_resources(simulated);
    if (read.answer) a.kubelet.pods = std::move(read.answer);
    else a.kubelet.code = read.error->code, a.kubelet.error = "the simulated kubelet: " + read.error->message;
  } else {
    a.kubelet = ask_kubelet(session.seams());
  }
  ProcFs proc(session.seams().proc_root);
  a.frame = read_ps_frame(session, proc, LeasesOf::kRows, {}, {}, &a.kubelet);
  const Snapshot& s = session.snapshot();
  const std::vector<ProcessRow>& rows = a.frame.result.rows;
  std::map<std::string, std::vector<size_t>> unnamed;  // UID -> rows
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].pod && rows[i].pod->name.empty()) unnamed[rows[i].pod->uid].push_back(i);
  for (auto& [uid, positions] : unnamed) a.unnamed.push_back(positions);
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i].pod_unverified.empty()) a.unverified.push_back(i);
  if (!a.kubelet.pods) return a;
  for (const PodInfo& p : a.kubelet.pods->pods) {
    PodView v{p.name, p.ns, "", p.containers, pod_allocation(p, a.kubelet.pods->cdi, s), {}, {}};
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].pod && rows[i].pod->name == p.name && rows[i].pod->ns == p.ns) {
        v.rows.push_back(i);
        v.uid = rows[i].pod->uid;
      }
    // No NVIDIA device and no GPU process: not this tool's business.  An NVIDIA device that names
    // no GPU here (a DRA claim whose CDI spec could not be read) is one: listed, as unknown.
    bool nvidia_unknown = std::any_of(v.allocated.unknown.begin(), v.allocated.unknown.end(), [](const std::string& id) {
      size_t eq = id.find('=');  // a CDI name: its kind's vendor; a device plugin id: an NVIDIA resource's
      return eq == std::string::npos || id.substr(0, eq).find("nvidia.com/") != std::string::npos;
    });
    if (v.allocated.uuids.empty() && !nvidia_unknown && v.rows.empty()) continue;
    if (v.rows.empty() && !v.allocated.uuids.empty()) {
      std::vector<std::string> gpus;
      for (const std::string& u : v.allocated.uuids) gpus.push_back(s.describe_with_uuid(u));
      v.findings.push_back(
          {"pod-allocation-idle", Severity::kInfo,
           "pod " + p.ns + "/" + p.name + " was allocated " + join(gpus, ", ") + " and runs no process on " +
               (gpus.size() == 1 ? "it" : "them") + ": the GPUs are kept from other pods",
           "",
           "check that its work started (its logs), or that it still needs the GPUs (a finished notebook, a "
           "stuck init step); the device plugin gives them to no one else while the pod exists"});
    }
    a.pods.push_back(std::move(v));
  }
  return a;
}

}  // namespace gpumap
