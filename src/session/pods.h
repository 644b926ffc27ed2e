// Asking the kubelet which pods hold which devices: gpumap-kubelet (Seams::kubelet_helper, a
// program of its own so gRPC never enters gpumap) run with a deadline, its JSON read back.
#pragma once
#include "answer/pods_answer.h"
#include "model/pod.h"
#include "model/seams.h"

namespace gpumap {

/// The kubelet's answer, or why there is none (KubeletReply::code).  Never throws: a node
/// without a kubelet, a socket gpumap may not open, a helper that hangs are all answers.
KubeletReply ask_kubelet(const Seams& seams);

class Session;

/// `gpumap pods`: the kubelet asked once, the GPU processes read (as `ps`), and each pod that holds
/// an NVIDIA device or runs a GPU process with its allocation, its processes and its findings.
PodsAnswer read_pods(Session& session);

}  // namespace gpumap
