// Whether this process runs inside a container, and what the container can open (the OS seam for
// container checks).
#pragma once
#include <string>

#include "model/container_facts.h"

namespace gpumap {

/// True when /.dockerenv or /run/.containerenv exists (Docker, Podman).  The rest of the
/// decision ($container set by systemd-nspawn and Podman, GPUMAP_IN_CONTAINER for tests) is the
/// environment's, made once in seams_from_environment.
bool container_files_present();

/// What this container can open: the /dev/nvidiaN nodes in `dev_dir`, the device cgroup's rules
/// (cgroup v1 `<cgroup_root>/devices/devices.list`; on v2, recognised by
/// `<cgroup_root>/cgroup.controllers`, the rules are an eBPF program nobody can read back, so only
/// the version is said), and whether every capability is in `<proc_root>/self/status`'s CapEff
/// (a privileged container).  `given` stays unknown: a container cannot ask the kubelet.  Never
/// throws: what cannot be read stays nullopt/unknown.
ContainerFacts read_container_facts(const std::string& dev_dir = "/dev", const std::string& cgroup_root = "/sys/fs/cgroup",
                                    const std::string& proc_root = "/proc");

}  // namespace gpumap
