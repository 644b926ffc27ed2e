// NVLink topology as the NVML reader sees it: direct GPU-GPU links and links through
// NVSwitches (measured: H200 x2 links end at switches whose bus id reads FFFFFFFF:FF:FF.0).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

json pick2(const std::string& host, const std::vector<std::string>& env = {}) {
  CliRun r = gpumap_here({"pick", "--gpus", "2", "--json", "--simulate", host}, env);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(CliTopology, SwitchConnectedGpusArePeersThroughTheP2PStatus) {
  json j = pick2("h200x2");
  EXPECT_EQ(j["notes"][0], "every pair joined by NVLink (18 links over 1 pair)") << j.dump();
}

TEST(CliTopology, EightGpuSwitchHostCountsEveryPair) {
  CliRun r = gpumap_here({"pick", "--gpus", "4", "--json", "--simulate", "dgx8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["notes"][0], "every pair joined by NVLink (108 links over 6 pairs)") << r.out;
}

TEST(CliTopology, WithoutTheRemoteTypeCallSwitchLinksNameNoPeer) {
  // The legacy fake lacks nvmlDeviceGetNvLinkRemoteDeviceType: a switch's FFFFFFFF:FF:FF.0
  // matches no GPU, so no peer is invented.
  json j = pick2("h200x2", {"GPUMAP_SIM_LIBDIR=" GPUMAP_BUILD_DIR "/sim-legacy"});
  EXPECT_NE(j["notes"][0].get<std::string>().find("no NVLink"), std::string::npos) << j.dump();
}

TEST(CliTopology, DirectLinksStillCountPerLink) {
  json j = pick2(host_path("pick4"));
  EXPECT_NE(j["notes"][0].get<std::string>().find("NVLink (2 links over 1 pair)"), std::string::npos) << j.dump();
}

}  // namespace
}  // namespace gpumap::testing
