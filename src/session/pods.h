// `gpumap pods`: each pod that holds an NVIDIA device or runs a GPU process, from the kubelet's
// answer (session/kubelet.h) and the GPU processes (session/ps.h).
#pragma once
#include "answer/pods_answer.h"

namespace gpumap {

class Session;

/// `gpumap pods`: the kubelet asked once, the GPU processes read (as `ps`), and each pod that holds
/// an NVIDIA device or runs a GPU process with its allocation, its processes and its findings.
PodsAnswer read_pods(Session& session);

}  // namespace gpumap
