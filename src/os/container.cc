#include "os/container.h"

#include <unistd.h>


namespace gpumap {

bool container_files_present() { return access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0; }

}  // namespace gpumap
