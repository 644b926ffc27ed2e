// Which Kubernetes pod and container a process runs in, from its /proc/PID/cgroup text.  Pure: the
// read is os/'s, the pod's name and namespace come from the kubelet (pod-resources API).
//
// The kubelet names a pod's cgroup by its QoS class and UID, in one of two layouts:
//   systemd driver:  /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID>.slice/<container>
//                    (the UID's dashes written as underscores; Guaranteed pods sit directly under
//                    kubepods.slice as kubepods-pod<UID>.slice; kind and other nested kubelets add a
//                    prefix such as kubelet-kubepods-...)
//   cgroupfs driver: /kubepods/burstable/pod<UID>/<container id>  (Guaranteed: /kubepods/pod<UID>/...)
// and the runtime names the container's own cgroup: cri-containerd-<ID>.scope (containerd),
// crio-<ID>.scope (CRI-O; crio-conmon-<ID>.scope is its monitor), docker-<ID>.scope or a bare ID
// (Docker, cgroupfs), libpod-<ID>.scope (Podman).  cgroup v2 has one line "0::PATH"; v1 has one
// line per hierarchy, which name the same path for a pod's process.
#pragma once
#include <optional>
#include <string>

namespace gpumap {

struct PodCgroup {
  std::string pod_uid;       // with dashes, lower case ("5f8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
  std::string qos;           // "guaranteed", "burstable" or "besteffort"
  std::string container_id;  // 64 hex digits, or "" when the process sits in the pod's own cgroup
  std::string runtime;       // "containerd", "cri-o", "docker", "podman", or "" when not named
};

/// The pod of the first cgroup line that names one; nullopt for a process outside Kubernetes.
std::optional<PodCgroup> parse_pod_cgroup(const std::string& proc_cgroup_text);

/// A container's cgroup outside Kubernetes (docker run, podman run): its runtime and ID.
struct ContainerCgroup {
  std::string id;       // 64 hex digits
  std::string runtime;  // "docker", "podman", "containerd", "cri-o"
};
std::optional<ContainerCgroup> parse_container_cgroup(const std::string& proc_cgroup_text);

}  // namespace gpumap
