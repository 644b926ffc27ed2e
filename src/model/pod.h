// What the kubelet says about a node's pods and their devices (the pod-resources API), as plain
// values: the kube/ reader fills them from gRPC, formats/pod_resources.h carries them as JSON
// between that reader program and gpumap.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// Devices of one resource given to a container (or allocatable on the node), as the device
/// plugin names them: "nvidia.com/gpu" with UUIDs ("GPU-..."), indices ("0",
/// DEVICE_ID_STRATEGY=index), time-sliced or MPS replicas ("GPU-...::1"); "nvidia.com/mig-1g.10gb"
/// with MIG UUIDs.
struct PodDevices {
  std::string resource;
  std::vector<std::string> ids;
};

struct PodContainer {
  std::string name;
  std::vector<PodDevices> devices;
  std::vector<std::string> cdi_devices;  // from DRA claims: "nvidia.com/gpu=GPU-..." and the like
};

struct PodInfo {
  std::string name, ns;
  std::vector<PodContainer> containers;
};

/// The pod a process runs in: from its cgroup (uid, qos, container id, runtime), named by the
/// kubelet's answer when it gave one (resolve/pod_join.h), with what the kubelet allocated to
/// its container.
struct PodRef {
  std::string uid, qos, container_id, runtime;  // env/pod_cgroup.h
  std::string name, ns, container;              // "" while the kubelet has not named them
  /// The GPUs the kubelet gave its container, as nvidia-smi UUIDs (MIG devices: their UUIDs), its
  /// device ids resolved; meaningful when allocation_known.
  std::vector<std::string> allocated;
  bool allocation_known = false;
  std::vector<std::string> shared;              // those of `allocated` given as replicas (GPU-...::N)
  std::vector<std::string> claimed;             // those of `allocated` given through DRA claims (CDI devices)
  /// The GPUs its NVIDIA_VISIBLE_DEVICES names (every GPU for "all"; MIG devices: theirs), which the
  /// NVIDIA container runtime gives the container; nullopt when it names none ("void" under CDI,
  /// "none", unset) or an entry gpumap cannot place.  Set with the allocation.
  std::optional<std::vector<std::string>> visible;
};

/// A CDI device of the node's spec files (/etc/cdi, /var/run/cdi; formats/cdi_spec.h): its fully
/// qualified name and the host device nodes it gives a container.
struct CdiDevice {
  std::string name;                       // "nvidia.com/gpu=0", "k8s.gpu.nvidia.com/device=gpu-0"
  std::vector<std::string> device_nodes;  // host paths: "/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap21"
  std::string file;                       // the spec file that defines it
};

/// What the node's CDI spec files say (read by gpumap-kubelet beside the kubelet's answer), and
/// each file that could not be read, with why.
struct CdiSpecs {
  std::vector<std::string> dirs;  // searched, lowest priority first (a later folder's device wins)
  std::vector<CdiDevice> devices;
  struct Problem {
    std::string file, message;
  };
  std::vector<Problem> problems;
};

/// One answer of the kubelet: every pod with its containers' devices, and the node's allocatable
/// devices (nullopt: this kubelet does not implement GetAllocatableResources); with the node's
/// CDI devices, which name what DRA claims gave (PodContainer::cdi_devices).
struct PodResources {
  std::string socket;
  std::vector<PodInfo> pods;
  std::optional<std::vector<PodDevices>> allocatable;
  CdiSpecs cdi;
};

/// What asking the kubelet gave (session/kubelet.h): its answer, or why there is none.  `code` is
/// gpumap-kubelet's ("absent", "denied", "unavailable", "deadline", "failed") or "not-built"
/// (this gpumap has no gpumap-kubelet beside it) or "helper-failed" (it did not run or answer).
struct KubeletReply {
  std::optional<PodResources> pods;
  std::string code, error;
};

}  // namespace gpumap
