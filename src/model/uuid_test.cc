#include "model/uuid.h"

#include <gtest/gtest.h>

#include "model/snapshot.h"

namespace gpumap {
namespace {

const char* kGpu = "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab";
const char* kMig = "MIG-a04764cc-0f61-5fc1-4301-0cd910d5610a";
const char* kMigAsCuda = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a";  // how CUDA writes that MIG device

Snapshot one_gpu_with_mig() {
  Snapshot s;
  Gpu g;
  g.nvml_index = 3;
  g.uuid = kGpu;
  g.mig_devices.push_back({"MIG-00000000-0000-0000-0000-000000000000", "", {}, {}, {}, {}});
  g.mig_devices.push_back({kMig, "", {}, {}, {}, {}});
  s.gpus.push_back(g);
  Gpu lost;  // NVML could not read its UUID
  lost.nvml_index = 4;
  s.gpus.push_back(lost);
  return s;
}

TEST(Uuid, TwoReadings) {
  EXPECT_EQ(uuid_hex(kGpu), "ef612c2cfb9614cbebbf9b494cffceab");
  EXPECT_TRUE(same_uuid(kGpu, "gpu-EF612C2C-fb96-14cb-ebbf-9b494cffceab"));
  EXPECT_FALSE(same_uuid(kMig, kMigAsCuda)) << "NVML's names: a GPU- is not a MIG-";
  EXPECT_TRUE(same_uuid_hex(kMig, kMigAsCuda)) << "the same 16 bytes";
  EXPECT_FALSE(same_uuid_hex(kGpu, kMig));
}

TEST(Uuid, SnapshotLookups) {
  Snapshot s = one_gpu_with_mig();
  EXPECT_EQ(s.find_device(kMig).mig, &s.gpus[0].mig_devices[1]);
  EXPECT_FALSE(s.find_device(kMigAsCuda).gpu);
  Snapshot::DeviceRef d = s.find_cuda_device(kMigAsCuda);
  EXPECT_EQ(d.gpu, &s.gpus[0]);
  EXPECT_EQ(d.mig, &s.gpus[0].mig_devices[1]);
  EXPECT_EQ(s.nvml_index_of(kMig), 3);
  EXPECT_EQ(s.nvml_index_of(""), -1) << "a lost GPU's empty UUID names nothing";
  EXPECT_EQ(s.describe(kGpu), "nvidia-smi GPU 3");
  EXPECT_EQ(s.describe(kMig), "nvidia-smi GPU 3 MIG device 1");
  EXPECT_EQ(s.describe("GPU-1234"), "unknown GPU GPU-1234");
  EXPECT_EQ(s.describe(""), "a GPU NVML could not identify");
  EXPECT_FALSE(s.find_uuid(""));
}

// The lookups go through an index built on first use (issue 34 point 9); a snapshot edited in
// place, copied or grown after a lookup still gets the answers of a scan.
TEST(Uuid, SnapshotLookupsAfterEditsCopiesAndGrowth) {
  Snapshot s = one_gpu_with_mig();
  ASSERT_EQ(s.find_uuid(kGpu), &s.gpus[0]);
  std::string old_uuid = s.gpus[0].uuid;
  s.gpus[0].uuid = "GPU-11111111-2222-3333-4444-555555555555";  // renamed in place: same size, same storage
  EXPECT_FALSE(s.find_uuid(old_uuid)) << "the index's entry is checked against the GPU";
  EXPECT_EQ(s.find_uuid("gpu-11111111-2222-3333-4444-555555555555"), &s.gpus[0]) << "a miss falls back to the scan";
  EXPECT_EQ(s.find_cuda_device("GPU-11111111222233334444555555555555").gpu, &s.gpus[0]);
  Snapshot copy = s;
  EXPECT_EQ(copy.find_device(kMig).mig, &copy.gpus[0].mig_devices[1]) << "a copy answers with its own GPUs";
  EXPECT_EQ(s.find_device(kMig).mig, &s.gpus[0].mig_devices[1]);
  Gpu second = s.gpus[0];
  second.nvml_index = 6;
  second.uuid = "GPU-66666666-2222-3333-4444-555555555555";
  second.mig_devices.clear();
  s.gpus.push_back(second);  // grown: the index is rebuilt
  EXPECT_EQ(s.nvml_index_of("GPU-66666666-2222-3333-4444-555555555555"), 6);
  EXPECT_EQ(s.nvml_index_of(kMig), 3);
  // A repeated UUID (only a hand-made host has one) answers the first, as the scan did.
  s.gpus.push_back(second);
  s.gpus.back().nvml_index = 7;
  EXPECT_EQ(s.nvml_index_of("GPU-66666666-2222-3333-4444-555555555555"), 6);
}

TEST(Uuid, KeyIsEqualExactlyWhenSameUuid) {
  const char* a = "GPU-df9ecf4c-aa11-4b22-8c33-0123456789ab";
  EXPECT_EQ(uuid_key(a), uuid_key("gpu-DF9ECF4C-AA11-4B22-8C33-0123456789AB"));
  EXPECT_TRUE(same_uuid(a, "gpu-DF9ECF4C-AA11-4B22-8C33-0123456789AB"));
  EXPECT_NE(uuid_key(a), uuid_key("MIG-df9ecf4c-aa11-4b22-8c33-0123456789ab"));
  EXPECT_FALSE(same_uuid(a, "MIG-df9ecf4c-aa11-4b22-8c33-0123456789ab"));
  EXPECT_NE(uuid_key(a), uuid_key("GPU-df9ecf4caa114b228c330123456789ab")) << "dashes count, as in same_uuid";
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

TEST(Uuid, StartsWithIgnoresCaseAndNeverReadsPastTheEnd) {
  EXPECT_TRUE(uuid_starts_with("GPU-28554ffd-acce", "gpu-28554FFD"));
  EXPECT_TRUE(uuid_starts_with("MIG-ab", "MIG-"));
  EXPECT_TRUE(uuid_starts_with("GPU-ab", ""));
  EXPECT_FALSE(uuid_starts_with("GPU-ab", "GPU-abc"));  // a prefix longer than the UUID
  EXPECT_FALSE(uuid_starts_with("GPU-ab", "MIG-ab"));
}

}  // namespace
}  // namespace gpumap
