// What a container started with NVIDIA_VISIBLE_DEVICES sees (the NVIDIA container toolkit,
// documented in reference/cuda-env-semantics.md §5): only the injected GPUs exist, numbered from
// 0 by NVML, nvidia-smi and CUDA in the host's (PCI) order; UUIDs and PCI bus ids stay the host's.
// Pure: a host snapshot and the variable in, the in-container snapshot out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/environment.h"
#include "env/nvidia_visible_devices.h"
#include "model/container_facts.h"
#include "model/snapshot.h"

namespace gpumap {

struct ContainerView {
  Snapshot snapshot;  // the GPUs inside, renumbered; source says it is a prediction
  std::string what;   // in words: "GPUs 0, 2 of the host, renumbered from 0"
};

/// Throws Error(kExitUsage) for an entry the runtime would refuse (naming it and the host's GPUs):
/// the container would not start.
ContainerView container_view(const Snapshot& host, const std::string& nvidia_visible_devices);

/// Inside a container (`inside`: the GPUs it sees, numbered from 0): each one's nvidia-smi index on
/// the host, in the order of `inside.gpus`, when NVIDIA_VISIBLE_DEVICES names whole GPUs by host
/// index and as many as are here (the runtime injects them in the host's order and numbers them
/// from 0: `2,3` makes host GPU 3 the container's GPU 1); empty when that cannot be told (UUIDs,
/// MIG devices, `all`, a count that does not match).
std::vector<uint32_t> host_indices(const Snapshot& inside, const std::optional<std::string>& nvidia_visible_devices);

/// cgroup v1 devices.list rules: the minors of the NVIDIA character major (195) they allow; nullopt
/// when they allow every one (`a *:* rwm`, `c *:* rwm`, `c 195:* rw`, as for a privileged container).
std::optional<std::vector<uint32_t>> cgroup_allowed_minors(const std::vector<std::string>& device_rules);

/// A container's GPUs: what NVML lists in it against what it was given (issue 52 item 3).
struct ContainerGrant {
  /// The whole GPUs NVML lists here (UUIDs, in NVML order).
  std::vector<std::string> seen;
  /// The GPUs (or MIG devices) it was given, as UUIDs: ContainerFacts::given, else an
  /// NVIDIA_VISIBLE_DEVICES list (or `none`) when NVML lists more GPUs than it names; nullopt when
  /// that cannot be told from inside (`void` under CDI, unset, `all`).
  std::optional<std::vector<std::string>> given;
  std::string given_by;  // "NVIDIA_VISIBLE_DEVICES=0", "the kubelet's allocation"
  /// GPUs NVML lists that were not given (UUIDs; a GPU one of whose MIG devices was given is given).
  std::vector<std::string> extra;
  /// Every capability: a privileged container opens every GPU whatever it requested.
  bool privileged = false;
  /// The device cgroup (v1) allows every NVIDIA device.
  bool cgroup_allows_all = false;
  /// /dev/nvidiaN nodes of GPUs it was not given are present (a hostPath /dev, -v /dev:/dev).
  bool extra_nodes = false;
  /// In a Kubernetes pod ($KUBERNETES_SERVICE_HOST), NVIDIA_VISIBLE_DEVICES is `all` or holds
  /// indices: the device plugin writes neither (it writes UUIDs, a volume-mounts path or nothing
  /// under CDI), so the image or the pod spec set it.
  bool envvar_not_from_plugin = false;
  /// Whether the container can see more GPUs than it was given: extra non-empty, or (given
  /// unknown) privileged with two or more GPUs listed, or envvar_not_from_plugin.
  bool sees_more() const;
};

/// Pure: the snapshot NVML gives inside the container, what the container can open, its
/// environment.  Entries of `given` that name no GPU here are left out.
ContainerGrant container_grant(const Snapshot& inside, const ContainerFacts& facts, const Environment& env);

}  // namespace gpumap
