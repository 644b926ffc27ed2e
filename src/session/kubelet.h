// Asking the kubelet which pods hold which devices: gpumap-kubelet (Seams::kubelet_helper, a
// program of its own so gRPC never enters gpumap) run with a deadline, its JSON read back.
// Below both `ps` (which names the pods of its rows) and `pods` (which lists them), so neither
// reaches the other for it; session/kubelet_cache.h keeps one answer across a monitor's frames.
#pragma once
#include "model/pod.h"
#include "model/seams.h"

namespace gpumap {

/// The kubelet's answer, or why there is none (KubeletReply::code).  Never throws: a node
/// without a kubelet, a socket gpumap may not open, a helper that hangs are all answers.
KubeletReply ask_kubelet(const Seams& seams);

}  // namespace gpumap
