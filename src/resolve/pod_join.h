// Which pod a GPU process is in, by name, and what the kubelet allocated to it: the kubelet's
// pod-resources answer (model/pod.h) joined with what each process's cgroup and environment say.
// Pure: the answer comes from gpumap-kubelet (session/kubelet.h), the rows from resolve/process_view.h.
//
// The pod-resources API names pods by namespace and name, never by UID, and a cgroup names the
// pod by UID only.  The two meet through the process's environment:
//  - $HOSTNAME is the pod's name (unless the pod spec sets `hostname`, or hostNetwork gives the
//    node's name);
//  - $NVIDIA_VISIBLE_DEVICES is what the NVIDIA device plugin allocated to the container (its
//    envvar strategy writes the same ids, in the same form, as it reports to the kubelet), so it
//    names the container as well.
// A pod UID whose processes point at exactly one pod gets that pod's name for every one of its
// processes; an ambiguous or unmatched UID keeps only its UID (said, never guessed).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "env/environment.h"

#include "model/pod.h"
#include "model/snapshot.h"
#include "resolve/process_view.h"

namespace gpumap {

/// The GPUs a container's devices name on this host.  Only the NVIDIA device plugin's resources
/// count ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared", ...).  An id is a
/// GPU or MIG UUID; a replica "GPU-...::N" (time-slicing, MPS) is its GPU, listed in `shared` too;
/// "N" (DEVICE_ID_STRATEGY=index) is nvidia-smi GPU N, "N:M" MIG device M of GPU N.  Ids that
/// name nothing here are kept in `unknown`.
struct AllocatedGpus {
  std::vector<std::string> uuids;    // each once, in the kubelet's order
  std::vector<std::string> shared;   // of uuids, those given as replicas
  std::vector<std::string> claimed;  // of uuids, those given through DRA claims (CDI devices)
  std::vector<std::string> unknown;  // ids (or CDI names) that name no GPU of this host
};
AllocatedGpus allocated_gpus(const std::vector<PodDevices>& devices, const Snapshot& s);

/// The GPUs a CDI device gives a container (UUIDs; a MIG device: its UUID), empty when it names
/// none here.  A device of the node's spec files is placed by its host device nodes: /dev/nvidiaN
/// is the GPU of minor number N; with /dev/nvidia-caps nodes it is a MIG device of that GPU, named
/// by its CDI name when that is "N:M" or a MIG UUID (as nvidia-ctk writes them), else its whole GPU.
/// A name no spec defines is read as the NVIDIA kinds write theirs: nvidia.com/gpu=0, =0:1,
/// =GPU-..., =MIG-..., =all.
std::vector<std::string> cdi_device_gpus(const std::string& name, const CdiSpecs& cdi, const Snapshot& s);

/// A container's allocation: its device plugin devices (allocated_gpus) and its DRA claims' CDI
/// devices (cdi_device_gpus, listed in `claimed` too).
AllocatedGpus container_allocation(const PodContainer& c, const CdiSpecs& cdi, const Snapshot& s);
/// container_allocation of every container of `pod`.
AllocatedGpus pod_allocation(const PodInfo& pod, const CdiSpecs& cdi, const Snapshot& s);

/// The GPUs NVIDIA_VISIBLE_DEVICES gives a container under the NVIDIA container runtime: every GPU
/// for "all", each entry placed (indices, UUIDs, MIG "N:M" and UUIDs, replicas "GPU-...::N", CDI
/// names); nullopt for unset, "void", "none", or an entry that names nothing here.
std::optional<std::vector<std::string>> nvd_gpus(const std::optional<std::string>& value, const CdiSpecs& cdi,
                                                 const Snapshot& s);

/// The CUDA view of an environment inside a container whose GPUs are `inside` (container_view's
/// snapshot: only those, renumbered from 0): the session's mapping engine over that subset.
using ViewIn = std::function<CudaView(const Snapshot& inside, const Environment& env)>;

/// Each process in a container layer (a pod, or another PID namespace) whose container's GPUs are
/// known gets the cuda:N CUDA gives it inside: the toolkit injects the GPUs NVIDIA_VISIBLE_DEVICES
/// names (a list, or "all"), or, in CDI mode ("void") in a pod the kubelet named, the devices it was
/// allocated; CUDA numbers those from 0, then applies the process's CUDA_VISIBLE_DEVICES and
/// CUDA_DEVICE_ORDER.  Its row's view, cuda:N and rank are replaced, container_gpus set.  Rows whose
/// container is not known keep the host's view (said by container_gpus being unset).
void container_cuda_views(PsResult& res, const Snapshot& s, const ViewIn& view_in);

/// Names the pods of `rows` (those whose `pod` the cgroup filled) from `kubelet`, and sets each
/// one's allocation: its container's GPUs when the container is known, else every GPU of its pod.
void name_pods(std::vector<ProcessRow>& rows, const PodResources& kubelet, const Snapshot& s);

}  // namespace gpumap
