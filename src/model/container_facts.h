// What a container can open and what it was given, as plain values (issue 52 item 3).  Read by the
// OS seam (os/container.h) inside a container, or from a simulated host's `container` object
// (docs/host-file.md); judged by the pure rule `container-sees-more-gpus` (findings/host_rules.cc)
// through resolve/container_view.h's container_grant.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// The device cgroup's version, as far as it can be read: v1's devices.list is a file of rules;
/// v2's rules are an eBPF program, which a process cannot read back.
enum class DeviceCgroup { kUnknown, kV1, kV2 };

struct ContainerFacts {
  /// All capabilities in CapEff (/proc/self/status): `docker run --privileged`, `privileged: true`
  /// in a pod.  nullopt: not read.
  std::optional<bool> privileged;
  /// The minor numbers of the /dev/nvidiaN nodes present (nvidiactl 255 and nvidia-modeset 254
  /// left out); nullopt: /dev was not read.
  std::optional<std::vector<uint32_t>> dev_nodes;
  DeviceCgroup cgroup = DeviceCgroup::kUnknown;
  /// cgroup v1 devices.list, one rule a line ("a *:* rwm", "c 195:0 rw"); empty unless kV1.
  std::vector<std::string> device_rules;
  /// What the container runtime or the kubelet gave the container (host-file `given`: GPU and MIG
  /// UUIDs, or nvidia-smi indices of the host); nullopt: not known here (a real container cannot
  /// ask the kubelet).
  std::optional<std::vector<std::string>> given;
  /// Where `given` comes from, in words ("the kubelet's allocation"); "" when unknown.
  std::string given_by;
};

}  // namespace gpumap
