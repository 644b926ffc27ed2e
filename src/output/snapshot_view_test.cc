#include "output/snapshot_view.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

MappingSnapshot saved_on_node7() {
  MappingSnapshot s;
  s.hostname = "node7";
  s.driver_version = "580.159.04";
  s.gpus = {SnapshotGpu{0, 0, "GPU-d7a6e045-6a6d-ea2f-480e-29591e1ae97e", "00000000:07:00.0", "NVIDIA A100-SXM4-80GB",
                        false, {}}};
  return s;
}

TEST(SnapshotView, DiffJsonHasEachChangeAsAnObject) {
  MappingSnapshot now = saved_on_node7();
  now.driver_version = "580.200.01";
  SnapshotDiff d = diff_mapping_snapshots(saved_on_node7(), now);
  Json j = snapshot_diff_json("/x/snap.json", saved_on_node7(), now, d);
  EXPECT_EQ(j["same"], false);
  EXPECT_EQ(j["snapshot"], "/x/snap.json");
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["kind"], "driver_changed");
  EXPECT_EQ(j["changes"][0]["before"], "580.159.04");
  EXPECT_EQ(j["changes"][0]["after"], "580.200.01");
  EXPECT_EQ(j["changes"][0]["uuid"], nullptr);
  EXPECT_EQ(j["saved_on"], "node7");
}

}  // namespace
}  // namespace gpumap
