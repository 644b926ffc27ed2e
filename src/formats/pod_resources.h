// The pod-resources answer (model/pod.h) as the JSON document `gpumap-kubelet` prints and gpumap
// reads back: gRPC stays in that program (a build option), gpumap and libgpumap.so never link it.
//
//   {"socket": "/var/lib/kubelet/pod-resources/kubelet.sock",
//    "pods": [{"name": "train-0", "namespace": "ml", "containers": [{"name": "main",
//               "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-..."]}], "cdi_devices": []}]}],
//    "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["GPU-...", "GPU-..."]}] | null,
//    "cdi": {"dirs": ["/etc/cdi", "/var/run/cdi"], "devices": [{"name": "nvidia.com/gpu=0",
//            "device_nodes": ["/dev/nvidia0", ...], "file": "/etc/cdi/nvidia.yaml"}],
//            "problems": [{"file": "...", "message": "..."}]}}   ("cdi" absent: none read)
//   or, when the kubelet could not be asked: {"socket": "...", "error": {"code": CODE, "message": "..."}}
//   with CODE one of "absent" (no socket), "denied", "unavailable", "deadline", "failed".
#pragma once
#include <string>

#include "formats/json.h"
#include "model/pod.h"

namespace gpumap {

Json pod_resources_json(const PodResources& r);

/// The kubelet could not be asked: its code ("absent", ...) and why, in words.
struct PodResourcesError {
  std::string code, message;
};
Json pod_resources_error_json(const std::string& socket, const PodResourcesError& e);

/// Parses pod_resources_json's or pod_resources_error_json's document: the answer, or the error.
/// Throws Error(kExitError) naming what is wrong with a document that is neither.
struct PodResourcesRead {
  std::optional<PodResources> answer;
  std::optional<PodResourcesError> error;
};
PodResourcesRead parse_pod_resources(const std::string& text);

}  // namespace gpumap
