// The rules of `gpumap ps`: from the joined rows (resolve/process_view.h: what NVML and /proc
// say about each process on each GPU, and the cuda:N its environment gives it) to the findings
// on each row.  Pure: no I/O.  Every rule id is documented in docs/findings.md and tested in
// ps_rules_test.cc.
#pragma once
#include "model/snapshot.h"
#include "resolve/process_view.h"

namespace gpumap {

/// Adds each row's findings to `ps` (built by join_ps from the same snapshot and namespace view):
/// a process this /proc cannot name, one that exited, an unreadable environment, a
/// CUDA_DEVICE_ORDER that breaks CUDA, a GPU outside the process's visible set, a cuda:N that
/// differs from nvidia-smi's number, and, once per process, a rank
/// that is not on its cuda:{rank} (rank-on-wrong-gpu) or holds memory on another GPU besides its
/// own (stray-context).  Once per GPU, in PsResult::gpu_findings (each concerned row refers to
/// it): a shared GPU (gpu-shared), local ranks of one job on one GPU (ranks-share-gpu), its
/// processes that see every GPU on a shared host (no-visibility-shared-host).
void add_ps_findings(const Snapshot& s, const PidNamespaceView& ns, PsResult& ps);

}  // namespace gpumap
