#include "driver/nvml_reader.h"

#include <dirent.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

size_t thread_count() {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory() ? 1 : 0;
  return n;
}

// Each bounded read against a hung driver left its reader thread (and its workers) behind: 41
// threads after 20 devices() calls from the library.  One reader thread now serves every read;
// while it hangs, later reads wait for it until their own deadline and fail the same way.
TEST(NvmlReader, AHungDriverHoldsOneReaderThreadAcrossCalls) {
  std::string dir = ::testing::TempDir() + "/gpumap-nvml-hang";
  std::filesystem::create_directories(dir);
  std::string host = dir + "/hang.json";
  {
    std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/hosts/h200x2.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(text.find('{') + 1, R"("faults": [{"call": "nvmlInit", "hang": true}],)");
    std::ofstream(host) << text;
  }
  DriverSource src;
  src.nvml_library = std::string(GPUMAP_BUILD_DIR) + "/sim/libnvidia-ml.so.1";
  src.simulated = true;
  src.host_file = host;
  src.driver_timeout_s = 0.2;
  size_t before = thread_count();
  for (int i = 0; i < 6; ++i) {
    try {
      read_snapshot(src, ReadOptions{});
      ADD_FAILURE() << "a hung nvmlInit answered";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitNoDriver);
      EXPECT_NE(std::string(e.what()).find("did not answer within 0.2 s"), std::string::npos) << e.what();
    }
  }
  EXPECT_LE(thread_count(), before + 1) << "one reader thread, reused, not one per call";
  std::filesystem::remove_all(dir);
}

// Through NVSwitches every GPU reaches every other: stored as fabric membership (O(GPUs)),
// not as a peer entry per pair (O(GPUs^2): 7.6 GB for 8 192 GPUs); the pairs are derived.
TEST(NvmlReader, SwitchPeersAreAFabricNotPairs) {
  DriverSource src;
  src.nvml_library = std::string(GPUMAP_BUILD_DIR) + "/sim/libnvidia-ml.so.1";
  src.simulated = true;
  src.host_file = std::string(GPUMAP_SOURCE_DIR) + "/hosts/dgx8.json";
  src.driver_timeout_s = 0;
  ReadOptions opt;
  opt.nvlink = true;
  Snapshot s = read_snapshot(src, opt);
  ASSERT_EQ(s.gpus.size(), 8u);
  for (const Gpu& g : s.gpus) {
    EXPECT_TRUE(g.nvlink_peers.empty()) << "GPU " << g.nvml_index << " lists switch peers pair by pair";
    ASSERT_TRUE(g.nvswitch_fabric) << g.nvml_index;
    EXPECT_EQ(*g.nvswitch_fabric, 0u);
    std::vector<NvLinkPeer> peers = nvlink_peers_of(s, g);
    ASSERT_EQ(peers.size(), 7u);
    for (const NvLinkPeer& p : peers) EXPECT_EQ(p.links, 18u);
  }
  EXPECT_EQ(nvlinks_between(s.gpus[0], s.gpus[7]), 18u);
  EXPECT_EQ(nvlinks_between(s.gpus[3], s.gpus[3]), 0u);
}

}  // namespace
}  // namespace gpumap
