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
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

struct PodCgroup {
  std::string pod_uid;       // with dashes, lower case ("5f8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
  std::string qos;           // "guaranteed", "burstable" or "besteffort"
  std::string container_id;  // 64 hex digits, or "" when the process sits in the pod's own cgroup
  std::string runtime;       // "containerd", "cri-o", "docker", "podman", or "" when not named
  std::string path;          // the cgroup path that names the pod, as the line gives it
  size_t pod_segment = 0;    // the pod's folder: its index in `path` split at '/' (0: the leading "")
};

/// The pod of the first cgroup line that names one; nullopt for a process outside Kubernetes.
std::optional<PodCgroup> parse_pod_cgroup(const std::string& proc_cgroup_text);

/// Why a pod named by a process's cgroup is not taken as that pod (issue 46, item 7: a user with a
/// delegated cgroup tree made .../kubepods.slice/...-pod<UID>.slice/cri-containerd-<ID>.scope under
/// it and was shown as the pod); "" when it is the kubelet's.  The name must sit at the kubelet's
/// place: not below a user's systemd tree (user.slice, user-N.slice, user@N.service: where systemd
/// delegates cgroups to users and rootless Podman makes its containers).  `owners`: the uid owning
/// each folder of `owned_path` split at '/' (0: the hierarchy's root; nullopt: not found, as from
/// a cgroup namespace that does not see it), from ProcProcess: every folder from the pod's down to
/// the process's must be root's (only root makes folders there unless it delegated them); one
/// whose owner was not read (owners of another path, or nullopt) is unverified: said, not taken.
std::string pod_cgroup_untrusted(const PodCgroup& pod, const std::string& owned_path,
                                 const std::vector<std::optional<uint32_t>>& owners);

/// A container's cgroup outside Kubernetes (docker run, podman run): its runtime and ID.
struct ContainerCgroup {
  std::string id;       // 64 hex digits
  std::string runtime;  // "docker", "podman", "containerd", "cri-o"
};
std::optional<ContainerCgroup> parse_container_cgroup(const std::string& proc_cgroup_text);

}  // namespace gpumap
