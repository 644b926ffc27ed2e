#include "session/pods.h"

#include <sys/stat.h>

#include <cerrno>

#include <map>

#include "formats/pod_resources.h"
#include "model/text.h"
#include "os/proc.h"
#include "os/subprocess.h"
#include "session/ps.h"
#include "session/session.h"

namespace gpumap {

namespace {

/// The first line of a helper's stderr, trimmed and cut to 300 bytes (it goes into one message).
std::string first_line(const std::string& err) {
  std::string line = printable(trim(err.substr(0, err.find('\n'))));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

KubeletReply ask_kubelet(const Seams& seams) {
  KubeletReply a;
  struct stat st;
  if (stat(seams.kubelet_socket.c_str(), &st) != 0 && errno == ENOENT) {  // the plainest answer first
    a.code = "absent";
    a.error = "no pod-resources socket at " + seams.kubelet_socket +
              ": not a Kubernetes node, or its folder is not mounted into gpumap's pod ($GPUMAP_KUBELET_SOCKET names "
              "another)";
    return a;
  }
  if (seams.kubelet_helper.empty()) {
    a.code = "not-built";
    a.error = "this gpumap has no gpumap-kubelet beside it (Debian: install gpumap-kubernetes; from source: built when "
              "Debian's gRPC is installed, -DGPUMAP_KUBERNETES): pod names and allocations are unknown";
    return a;
  }
  // gpumap-kubelet gives up after 2 s itself; the extra second is for a helper that hangs anyway.
  ProcResult r = run_capture({seams.kubelet_helper, "--socket", seams.kubelet_socket, "--timeout", "2", "--cdi-dirs",
                              seams.cdi_dirs},
                             {"PATH=/usr/bin:/bin"}, 3000);
  if (!r.spawn_error.empty() || r.timed_out || (r.exit_code != 0 && r.exit_code != 1)) {
    a.code = "helper-failed";
    a.error = seams.kubelet_helper + (!r.spawn_error.empty() ? " could not start: " + r.spawn_error
                                      : r.timed_out       ? " did not finish in 3 s"
                                                          : " failed (exit " + std::to_string(r.exit_code) + ")" +
                                                                (first_line(r.err).empty() ? "" : ": " + first_line(r.err)));
    return a;
  }
  try {
    PodResourcesRead read = parse_pod_resources(r.out);
    if (read.answer) {
      a.pods = std::move(read.answer);
    } else {
      a.code = read.error->code;
      a.error = "the kubelet's pod-resources socket " + seams.kubelet_socket + ": " + read.error->message;
    }
  } catch (const std::exception& e) {
    a.code = "helper-failed";
    a.error = seams.kubelet_helper + " answered something else than its JSON: " + e.what();
  }
  return a;
}

PodsAnswer read_pods(Session& session) {
  PodsAnswer a;
  a.kubelet = ask_kubelet(session.seams());
  ProcFs proc(session.seams().proc_root);
  a.frame = read_ps_frame(session, proc, LeasesOf::kRows, {}, {}, &a.kubelet);
  const Snapshot& s = session.snapshot();
  const std::vector<ProcessRow>& rows = a.frame.result.rows;
  std::map<std::string, std::vector<size_t>> unnamed;  // UID -> rows
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].pod && rows[i].pod->name.empty()) unnamed[rows[i].pod->uid].push_back(i);
  for (auto& [uid, positions] : unnamed) a.unnamed.push_back(positions);
  if (!a.kubelet.pods) return a;
  for (const PodInfo& p : a.kubelet.pods->pods) {
    PodView v{p.name, p.ns, "", p.containers, pod_allocation(p, a.kubelet.pods->cdi, s), {}, {}};
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].pod && rows[i].pod->name == p.name && rows[i].pod->ns == p.ns) {
        v.rows.push_back(i);
        v.uid = rows[i].pod->uid;
      }
    if (v.allocated.uuids.empty() && v.rows.empty()) continue;  // no GPU: not this tool's business
    if (v.rows.empty()) {
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
