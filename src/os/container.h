// Whether this process runs inside a container (the OS seam for container checks).
#pragma once

namespace gpumap {

/// True when /.dockerenv or /run/.containerenv exists, or $container is set (podman,
/// systemd-nspawn), or GPUMAP_IN_CONTAINER=1 (tests).  GPUMAP_IN_CONTAINER=0 forces false.
bool in_container();

}  // namespace gpumap
