#include "os/sysfs.h"

#include <cstdio>
#include <fstream>

namespace gpumap {

std::optional<std::string> pci_local_cpulist(const std::string& sysfs_root, const PciAddress& a) {
  char dev[48];
  std::snprintf(dev, sizeof dev, "%04x:%02x:%02x.%x", a.domain, a.bus, a.device, a.function);
  std::ifstream in(sysfs_root + "/bus/pci/devices/" + dev + "/local_cpulist");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  if (line.empty() || line.find_first_not_of("0123456789,-") != std::string::npos) return std::nullopt;
  return line;
}

}  // namespace gpumap
