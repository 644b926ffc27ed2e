// gpumap pods: the node's pods that hold GPUs, what the kubelet allocated to each, and which of
// their processes use which GPU as which cuda:N.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/pods_view.h"
#include "session/pods.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  PodsAnswer a = read_pods(ctx.session());
  const Snapshot& s = ctx.session().snapshot();
  std::cout << render_pods(s, a, ctx.json());
  return a.kubelet.pods ? kExitOk : kExitError;
}

}  // namespace

Command pods_command() {
  return {"pods", "Kubernetes: each pod's allocated GPUs, and which of its processes use which",
          "gpumap pods [--json] [--simulate HOST]",
          "On a Kubernetes node: asks the kubelet's pod-resources API (through gpumap-kubelet beside\n"
          "gpumap; the socket is $GPUMAP_KUBELET_SOCKET, default\n"
          "/var/lib/kubelet/pod-resources/kubelet.sock) which devices each pod's containers were given,\n"
          "reads every GPU process as `gpumap ps` does (its pod from its cgroup, named by its HOSTNAME and\n"
          "NVIDIA_VISIBLE_DEVICES), and prints each pod that holds an NVIDIA device or runs a GPU process:\n"
          "its allocated GPUs (nvidia-smi index and UUID; replicas of time-slicing or MPS marked shared,\n"
          "DRA claims claimed: their CDI devices placed through the spec files in $GPUMAP_CDI_DIRS,\n"
          "default /etc/cdi:/var/run/cdi), each of its processes with the GPU it uses and the cuda:N it\n"
          "calls it inside its container, and the findings (pod-gpu-outside-allocation,\n"
          "pod-sees-unallocated-gpu, pod-gpu-shared, pod-allocation-idle; docs/kubernetes.md).\n"
          "Processes in a pod the kubelet does not name are listed by the pod's UID.  No API server, no RBAC: the node's own\n"
          "socket.  Exit 1 when the kubelet could not be asked (no socket: not a node, or the folder not\n"
          "mounted into gpumap's pod; gpumap-kubelet not built), after printing what the cgroups tell.",
          {},
          false,
          run};
}

}  // namespace gpumap
