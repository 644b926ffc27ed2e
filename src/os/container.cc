#include "os/container.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gpumap {

bool container_files_present() { return access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0; }

namespace {

// The NVIDIA driver's character major: /dev/nvidiaN is 195:N, nvidiactl 195:255, nvidia-modeset 195:254.
constexpr unsigned kNvidiaMajor = 195;

std::optional<std::vector<uint32_t>> nvidia_nodes(const std::string& dev_dir) {
  DIR* d = opendir(dev_dir.c_str());
  if (!d) return std::nullopt;
  std::vector<uint32_t> minors;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= 6 || name.compare(0, 6, "nvidia") != 0) continue;
    std::string digits = name.substr(6);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) || digits.size() > 6) continue;
    // The node's own minor when it is a character device of the driver (a test fixture may hold
    // plain files: their name says the number).
    struct stat st{};
    uint32_t minor = static_cast<uint32_t>(std::stoul(digits));
    if (stat((dev_dir + "/" + name).c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
      if (major(st.st_rdev) != kNvidiaMajor) continue;
      minor = static_cast<uint32_t>(::minor(st.st_rdev));
    }
    if (minor < 254) minors.push_back(minor);
  }
  closedir(d);
  std::sort(minors.begin(), minors.end());
  minors.erase(std::unique(minors.begin(), minors.end()), minors.end());
  return minors;
}

// Every capability in CapEff: what --privileged gives.
std::optional<bool> all_capabilities(const std::string& proc_root) {
  std::ifstream in(proc_root + "/self/status");
  if (!in) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    unsigned long long caps = 0;
    std::istringstream(line.substr(7)) >> std::hex >> caps;
    // Capabilities 0-37 (every kernel since 4.x knows them; CAP_PERFMON, BPF and CHECKPOINT_RESTORE,
    // 38-40, are newer): a default container has 14 of them, a privileged one every one.
    constexpr unsigned long long kFirst38 = (1ull << 38) - 1;
    return (caps & kFirst38) == kFirst38;
  }
  return std::nullopt;
}

}  // namespace

ContainerFacts read_container_facts(const std::string& dev_dir, const std::string& cgroup_root, const std::string& proc_root) {
  ContainerFacts f;
  f.dev_nodes = nvidia_nodes(dev_dir);
  f.privileged = all_capabilities(proc_root);
  std::ifstream v1(cgroup_root + "/devices/devices.list");
  if (v1) {
    f.cgroup = DeviceCgroup::kV1;
    std::string line;
    while (std::getline(v1, line))
      if (!line.empty()) f.device_rules.push_back(line);
  } else if (access((cgroup_root + "/cgroup.controllers").c_str(), F_OK) == 0) {
    f.cgroup = DeviceCgroup::kV2;
  }
  return f;
}

}  // namespace gpumap
