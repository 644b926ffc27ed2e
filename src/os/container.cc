#include "os/container.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace gpumap {

bool in_container() {
  if (const char* f = std::getenv("GPUMAP_IN_CONTAINER")) return std::strcmp(f, "1") == 0;
  if (access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0) return true;
  return std::getenv("container") != nullptr;
}

}  // namespace gpumap
