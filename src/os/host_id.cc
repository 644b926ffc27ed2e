#include "os/host_id.h"

#include <fstream>

namespace gpumap {

std::string read_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace gpumap
