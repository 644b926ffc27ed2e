#include "session/kubelet.h"

#include <sys/stat.h>

#include <cerrno>

#include "formats/pod_resources.h"
#include "model/text.h"
#include "os/subprocess.h"

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

}  // namespace gpumap
