// Asks the kubelet's pod-resources API (gRPC v1 on a Unix socket) which devices each pod's
// containers hold, within a deadline.  Only the gpumap-kubelet program links it (gRPC stays out
// of gpumap and libgpumap.so: a build option, on when Debian's libgrpc++-dev is installed).
#pragma once
#include <optional>
#include <string>

#include "formats/pod_resources.h"
#include "model/pod.h"

namespace gpumap {

/// The kubelet's socket where it serves pod-resources.
inline constexpr const char* kKubeletPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

struct KubeletAnswer {
  std::optional<PodResources> answer;
  std::optional<PodResourcesError> error;  // why the kubelet could not be asked
};

/// List (and GetAllocatableResources, when implemented) on `socket`, both within `timeout_s`.
/// Never throws: a missing or unreadable socket, a kubelet that does not answer in time or that
/// speaks something else is an error answer with its code.
KubeletAnswer ask_kubelet(const std::string& socket, double timeout_s);

}  // namespace gpumap
