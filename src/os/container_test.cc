// read_container_facts on fixture folders: /dev nodes, cgroup v1 and v2, CapEff.
#include "os/container.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

namespace fs = std::filesystem;

struct Dir {
  std::string path;
  Dir() {
    path = ::testing::TempDir() + "/container-facts-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  void file(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(path + "/" + rel).parent_path());
    std::ofstream(path + "/" + rel) << text;
  }
};

TEST(ContainerFacts, PrivilegedOnCgroupV1) {
  Dir d;
  for (const char* n : {"dev/nvidia0", "dev/nvidia3", "dev/nvidiactl", "dev/nvidia-uvm", "dev/nvidia-modeset", "dev/null"}) d.file(n, "");
  d.file("cgroup/devices/devices.list", "a *:* rwm\n");
  d.file("proc/self/status", "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n");
  ContainerFacts f = read_container_facts(d.path + "/dev", d.path + "/cgroup", d.path + "/proc");
  ASSERT_TRUE(f.dev_nodes.has_value());
  EXPECT_EQ(*f.dev_nodes, (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(f.cgroup, DeviceCgroup::kV1);
  EXPECT_EQ(f.device_rules, std::vector<std::string>{"a *:* rwm"});
  EXPECT_EQ(f.privileged, true);
  EXPECT_FALSE(f.given.has_value());
}

TEST(ContainerFacts, DefaultCapabilitiesOnCgroupV2) {
  Dir d;
  d.file("dev/nvidia2", "");
  d.file("cgroup/cgroup.controllers", "cpu memory\n");
  d.file("proc/self/status", "CapEff:\t00000000a80425fb\n");  // docker's default set
  ContainerFacts f = read_container_facts(d.path + "/dev", d.path + "/cgroup", d.path + "/proc");
  EXPECT_EQ(*f.dev_nodes, std::vector<uint32_t>{2});
  EXPECT_EQ(f.cgroup, DeviceCgroup::kV2);
  EXPECT_TRUE(f.device_rules.empty());
  EXPECT_EQ(f.privileged, false);
}

TEST(ContainerFacts, NothingReadableIsUnknown) {
  ContainerFacts f = read_container_facts("/nonexistent-gpumap/dev", "/nonexistent-gpumap/cg", "/nonexistent-gpumap/proc");
  EXPECT_FALSE(f.dev_nodes.has_value());
  EXPECT_FALSE(f.privileged.has_value());
  EXPECT_EQ(f.cgroup, DeviceCgroup::kUnknown);
}

}  // namespace
}  // namespace gpumap
