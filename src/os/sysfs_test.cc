#include "os/sysfs.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(Sysfs, ReadsLocalCpulistOfThePciDevice) {
  std::string root = ::testing::TempDir() + "/sysfs-" + std::to_string(getpid());
  std::string dir = root + "/bus/pci/devices/0000:3b:00.0";
  for (std::string p : {root, root + "/bus", root + "/bus/pci", root + "/bus/pci/devices", dir}) mkdir(p.c_str(), 0755);
  std::ofstream(dir + "/local_cpulist") << "0-15,32-47\n";
  EXPECT_EQ(pci_local_cpulist(root, {0, 0x3b, 0, 0}), "0-15,32-47");
  EXPECT_EQ(pci_local_cpulist(root, {0, 0x5d, 0, 0}), std::nullopt);  // no such device
  std::ofstream(dir + "/local_cpulist") << "garbage\n";
  EXPECT_EQ(pci_local_cpulist(root, {0, 0x3b, 0, 0}), std::nullopt);
}

}  // namespace
}  // namespace gpumap
