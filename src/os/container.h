// Whether this process runs inside a container (the OS seam for container checks).
#pragma once

namespace gpumap {

/// True when /.dockerenv or /run/.containerenv exists (Docker, Podman).  The rest of the
/// decision ($container set by systemd-nspawn and Podman, GPUMAP_IN_CONTAINER for tests) is the
/// environment's, made once in seams_from_environment.
bool container_files_present();

}  // namespace gpumap
