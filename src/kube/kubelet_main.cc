// gpumap-kubelet: prints what the kubelet's pod-resources API says about this node's pods and
// their devices, as JSON (formats/pod_resources.h), for gpumap to read.  A separate program so
// gRPC stays out of gpumap and libgpumap.so.
// usage: gpumap-kubelet [--socket PATH] [--timeout SECONDS] [--cdi-dirs DIR:DIR]
// exit: 0 answered; 1 the kubelet could not be asked (the document says why); 2 bad usage.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "formats/cdi_spec.h"
#include "kube/cdi_files.h"
#include "kube/kubelet_reader.h"
#include "model/text.h"

namespace {

int usage(const std::string& why) {
  std::cerr << "gpumap-kubelet: " << why << "\n"
            << "usage: gpumap-kubelet [--socket PATH] [--timeout SECONDS] [--cdi-dirs DIR:DIR]\n"
            << "       (default " << gpumap::kKubeletPodResourcesSocket << ", 10 s, /etc/cdi:/var/run/cdi)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket = gpumap::kKubeletPodResourcesSocket;
  double timeout = 10;
  std::vector<std::string> cdi_dirs = gpumap::kCdiSpecDirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "gpumap-kubelet [--socket PATH] [--timeout SECONDS] [--cdi-dirs DIR:DIR]: this node's pods and\n"
                   "the devices the kubelet gave their containers (pod-resources API v1), with the CDI devices\n"
                   "of the node's spec files (default /etc/cdi:/var/run/cdi, later folders win; \"\" reads\n"
                   "none), as JSON for gpumap.  Exit 0 answered, 1 the kubelet could not be asked (the JSON\n"
                   "error says why), 2 bad usage.\n";
      return 0;
    }
    if ((a == "--socket" || a == "--timeout" || a == "--cdi-dirs") && i + 1 >= argc) return usage(a + " needs a value");
    if (a == "--socket") {
      socket = argv[++i];
      if (socket.empty()) return usage("--socket: an empty path");
    } else if (a == "--timeout") {
      char* end = nullptr;
      timeout = std::strtod(argv[++i], &end);
      if (!*argv[i] || *end || !(timeout > 0 && timeout <= 3600))
        return usage(std::string("--timeout ") + argv[i] + ": seconds, more than 0 and at most 3600");
    } else if (a == "--cdi-dirs") {
      cdi_dirs.clear();
      for (const std::string& dir : gpumap::split(argv[++i], ':')) {
        if (!dir.empty() && dir[0] != '/') return usage("--cdi-dirs: " + dir + " is not an absolute path");
        if (!dir.empty()) cdi_dirs.push_back(dir);
      }
    } else {
      return usage("unknown argument " + a);
    }
  }
  gpumap::KubeletAnswer a = gpumap::ask_kubelet(socket, timeout);
  if (a.error) {
    std::cout << gpumap::dump(gpumap::pod_resources_error_json(socket, *a.error));
    return 1;
  }
  a.answer->cdi = gpumap::read_cdi_specs(cdi_dirs);
  std::cout << gpumap::dump(gpumap::pod_resources_json(*a.answer));
  return 0;
}
