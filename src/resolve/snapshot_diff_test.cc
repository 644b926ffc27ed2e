#include "resolve/snapshot_diff.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

const std::string kA = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
const std::string kB = "GPU-bbbbbbbb-0000-0000-0000-000000000000";
const std::string kC = "GPU-cccccccc-0000-0000-0000-000000000000";
const std::string kD = "GPU-dddddddd-0000-0000-0000-000000000000";
const std::string kMig1 = "MIG-11111111-0000-0000-0000-000000000000";
const std::string kMig2 = "MIG-22222222-0000-0000-0000-000000000000";

SnapshotGpu gpu(uint32_t index, const std::string& uuid, const std::string& bus, const std::string& name = "NVIDIA H200") {
  SnapshotGpu g;
  g.nvml_index = index;
  g.minor_number = index;
  g.uuid = uuid;
  g.pci_bus_id = bus;
  g.name = name;
  g.mig_enabled = false;
  return g;
}

// Three identical GPUs: CUDA's orders are PCI order.
MappingSnapshot three() {
  MappingSnapshot s;
  s.hostname = "node1";
  s.boot_id = "boot-1";
  s.saved_at = "2026-11-30T01:00:00Z";
  s.driver_version = "580.159.04";
  s.cuda_driver_version = 13000;
  s.gpus = {gpu(0, kA, "00000000:3B:00.0"), gpu(1, kB, "00000000:5D:00.0"), gpu(2, kC, "00000000:AF:00.0")};
  s.cuda_orders = {{"FASTEST_FIRST", {kA, kB, kC}, "predicted", ""}, {"PCI_BUS_ID", {kA, kB, kC}, "predicted", ""}};
  return s;
}

std::vector<std::string> kinds(const SnapshotDiff& d) {
  std::vector<std::string> k;
  for (const SnapshotChange& c : d.changes) k.push_back(c.kind);
  return k;
}

TEST(SnapshotDiff, RebootAndTimeAloneAreNoDifference) {
  MappingSnapshot now = three();
  now.boot_id = "boot-2";
  now.saved_at = "2026-12-01T01:00:00Z";
  now.gpus[1].pci_bus_id = "0000:5d:00.0";  // another writer's spelling of the same slot
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  EXPECT_TRUE(d.changes.empty()) << d.changes[0].message;
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("rebooted"), std::string::npos);
}

TEST(SnapshotDiff, ReplacedBoardIsNamedBySlotAndNotAlsoMissingOrNew) {
  MappingSnapshot now = three();
  now.gpus[2].uuid = kD;
  now.cuda_orders = {{"FASTEST_FIRST", {kA, kB, kD}, "predicted", ""}, {"PCI_BUS_ID", {kA, kB, kD}, "predicted", ""}};
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  ASSERT_EQ(kinds(d), std::vector<std::string>{"gpu_replaced"});
  EXPECT_EQ(d.changes[0].message,
            "nvidia-smi GPU 2 is now " + kD + " (was " + kC + "): the board in slot 00000000:AF:00.0 was replaced");
  EXPECT_EQ(d.changes[0].before, kC);
  EXPECT_EQ(d.changes[0].after, kD);
}

TEST(SnapshotDiff, SwappedSlotsAreMovesAndOrderChanges) {
  MappingSnapshot now = three();
  now.gpus[0].uuid = kB;
  now.gpus[1].uuid = kA;
  now.cuda_orders = {{"FASTEST_FIRST", {kB, kA, kC}, "predicted", ""}, {"PCI_BUS_ID", {kB, kA, kC}, "predicted", ""}};
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  EXPECT_EQ(kinds(d), (std::vector<std::string>{"gpu_moved", "minor_number_changed", "gpu_moved", "minor_number_changed",
                                                "cuda_order_changed", "cuda_order_changed"}));
  EXPECT_EQ(d.changes[0].message, kA + " moved from index 0 to 1 and from slot 00000000:3B:00.0 to 00000000:5D:00.0");
  EXPECT_EQ(d.changes[1].message, kA + " is now /dev/nvidia1 (was /dev/nvidia0)");
  EXPECT_NE(d.changes[4].message.find("CUDA's FASTEST_FIRST order changed"), std::string::npos);
}

TEST(SnapshotDiff, MissingGpuShiftsTheOnesAfterItButNotTheOrder) {
  MappingSnapshot now = three();
  now.gpus.erase(now.gpus.begin());
  now.gpus[0].nvml_index = 0;
  now.gpus[1].nvml_index = 1;
  now.cuda_orders = {{"FASTEST_FIRST", {kB, kC}, "predicted", ""}, {"PCI_BUS_ID", {kB, kC}, "predicted", ""}};
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  EXPECT_EQ(kinds(d), (std::vector<std::string>{"gpu_missing", "gpu_moved", "gpu_moved"}));
  EXPECT_EQ(d.changes[0].message, "a GPU is missing: nvidia-smi GPU 0 " + kA + " (NVIDIA H200, slot 00000000:3B:00.0) is gone");
  EXPECT_EQ(d.changes[1].message, kB + " moved from index 1 to 0 (same slot 00000000:5D:00.0)");
}

TEST(SnapshotDiff, NewGpu) {
  MappingSnapshot now = three();
  now.gpus.push_back(gpu(3, kD, "00000000:D8:00.0"));
  now.cuda_orders = {{"FASTEST_FIRST", {kA, kB, kC, kD}, "predicted", ""}, {"PCI_BUS_ID", {kA, kB, kC, kD}, "predicted", ""}};
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  ASSERT_EQ(kinds(d), std::vector<std::string>{"gpu_added"});
  EXPECT_EQ(d.changes[0].message, "a new GPU: nvidia-smi GPU 3 is " + kD + " (NVIDIA H200, slot 00000000:D8:00.0)");
}

TEST(SnapshotDiff, DriverAndCudaVersions) {
  MappingSnapshot now = three();
  now.driver_version = "580.200.01";
  now.cuda_driver_version = 13010;
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  ASSERT_EQ(kinds(d), (std::vector<std::string>{"driver_changed", "cuda_version_changed"}));
  EXPECT_EQ(d.changes[0].message, "driver 580.159.04 → 580.200.01");
  EXPECT_EQ(d.changes[1].message, "CUDA (driver API) 13.0 → 13.1");
}

TEST(SnapshotDiff, MigTurnedOnIsOneChangeNotAnOrderChange) {
  MappingSnapshot now = three();
  now.gpus[0].mig_enabled = true;
  now.gpus[0].mig_devices = {{kMig1, 1, 0}, {kMig2, 2, 0}};
  now.cuda_orders = {{"FASTEST_FIRST", {kMig1, kMig2, kB, kC}, "driver", ""},
                     {"PCI_BUS_ID", {kMig1, kMig2, kB, kC}, "driver", ""}};
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  ASSERT_EQ(kinds(d), std::vector<std::string>{"mig_mode_changed"});
  EXPECT_EQ(d.changes[0].message, "MIG was turned on on nvidia-smi GPU 0 (" + kA + ") (2 MIG devices)");

  // Recreated MIG instances get new UUIDs.
  MappingSnapshot later = now;
  later.gpus[0].mig_devices = {{kMig1, 1, 0}};
  SnapshotDiff d2 = diff_mapping_snapshots(now, later);
  ASSERT_EQ(kinds(d2), std::vector<std::string>{"mig_devices_changed"});
  EXPECT_EQ(d2.changes[0].message, "the MIG devices of nvidia-smi GPU 0 (" + kA + ") changed: gone " + kMig2);
}

TEST(SnapshotDiff, FastestFirstOrderChangeAlone) {
  MappingSnapshot now = three();
  now.cuda_orders[0].devices = {kC, kA, kB};
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  ASSERT_EQ(kinds(d), std::vector<std::string>{"cuda_order_changed"});
  EXPECT_EQ(d.changes[0].message,
            "CUDA's FASTEST_FIRST order changed: cuda:0.. was GPU-aaaaaaaa, GPU-bbbbbbbb, GPU-cccccccc, now "
            "GPU-cccccccc, GPU-aaaaaaaa, GPU-bbbbbbbb");
  EXPECT_EQ(d.changes[0].after, kC + "," + kA + "," + kB);
}

TEST(SnapshotDiff, OrderThatCanNoLongerBeReadIsADifferenceAnUnknownOneIsNot) {
  MappingSnapshot now = three();
  now.cuda_orders[0] = {"FASTEST_FIRST", {}, "", "cuInit failed"};
  EXPECT_EQ(kinds(diff_mapping_snapshots(three(), now)), std::vector<std::string>{"cuda_order_unavailable"});
  EXPECT_TRUE(diff_mapping_snapshots(now, three()).changes.empty());
}

TEST(SnapshotDiff, OtherHostIsANote) {
  MappingSnapshot now = three();
  now.hostname = "node2";
  SnapshotDiff d = diff_mapping_snapshots(three(), now);
  EXPECT_TRUE(d.changes.empty());
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0], "the snapshot was saved on host node1, this is node2");
}

}  // namespace
}  // namespace gpumap
