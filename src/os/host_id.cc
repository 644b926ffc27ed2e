#include "os/host_id.h"

#include <cstdlib>
#include <fstream>

namespace gpumap {

std::string read_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(in, s);
  return s;
}

std::string cache_dir() {
  if (const char* d = std::getenv("GPUMAP_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/gpumap";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/gpumap";
  return "";
}

}  // namespace gpumap
