#include "output/json_view.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(JsonView, NvLinkPeersListOneUuidPerLinkAsDocumented) {
  // The model keeps one entry per peer with a count; the JSON contract keeps one per link.
  Snapshot s;
  s.gpus.resize(3);
  const char* uuids[] = {"GPU-00000000-0000-4000-8000-000000000000", "GPU-11111111-1111-4111-8111-111111111111",
                         "GPU-22222222-2222-4222-8222-222222222222"};
  for (uint32_t i = 0; i < 3; ++i) s.gpus[i].nvml_index = i, s.gpus[i].uuid = uuids[i];
  s.gpus[0].nvlink_peers = {{uuids[1], 2, 1}, {uuids[2], 1, 2}};
  s.gpus[0].nvswitch_links = 0;
  Json j = gpu_json(s, s.gpus[0]);
  EXPECT_EQ(j["nvlink_peers"], Json::array({uuids[1], uuids[1], uuids[2]})) << j.dump();
  EXPECT_FALSE(gpu_json(s, s.gpus[1]).contains("nvlink_peers"));
}

}  // namespace
}  // namespace gpumap
