// `gpumap pods`' answer: the node's pods as the kubelet lists them, each with the GPUs it was
// allocated and the GPU processes that run in it (session/pods.h reads it, output/pods_view.h
// draws it).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "answer/ps_answer.h"
#include "model/finding.h"
#include "model/pod.h"
#include "resolve/pod_join.h"

namespace gpumap {

/// One pod that holds NVIDIA devices or runs a GPU process.
struct PodView {
  std::string name, ns;
  std::string uid;                   // from its processes' cgroups ("" when none runs)
  std::vector<PodContainer> containers;  // as the kubelet lists them
  AllocatedGpus allocated;           // every container's NVIDIA devices, as GPUs of this host
  std::vector<size_t> rows;          // its processes: positions in PodsAnswer::frame.result.rows
  std::vector<Finding> findings;     // pod-allocation-idle
};

struct PodsAnswer {
  KubeletReply kubelet;
  PsFrame frame;
  std::vector<PodView> pods;                    // the kubelet's order
  std::vector<std::vector<size_t>> unnamed;     // rows of a pod the kubelet did not name, by UID
  std::vector<size_t> unverified;               // rows whose cgroup names a pod outside the kubelet's
                                                // root-owned hierarchy (ProcessRow::pod_unverified)
};

}  // namespace gpumap
