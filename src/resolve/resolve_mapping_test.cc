#include "resolve/resolve_mapping.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(GpusNotVisible, NeitherTheGpuNorAnyOfItsMigDevicesShown) {
  Snapshot s;
  s.gpus.resize(4);
  s.gpus[0].uuid = "GPU-00000000-0000-4000-8000-000000000000";
  s.gpus[1].uuid = "GPU-11111111-1111-4111-8111-111111111111";
  s.gpus[1].mig_enabled = true;
  s.gpus[1].mig_devices = {{"MIG-aaaaaaaa-0000-4000-8000-000000000000", "m", 1, 0, 100, 0}};
  s.gpus[2].uuid = "GPU-22222222-2222-4222-8222-222222222222";
  s.gpus[3].uuid = "";  // NVML could not read it: nothing can show it
  for (uint32_t i = 0; i < 4; ++i) s.gpus[i].nvml_index = i;
  CudaView v;
  // CUDA writes a MIG device as GPU-<its hex>; case does not matter either.
  v.uuids = {"GPU-AAAAAAAA-0000-4000-8000-000000000000", "gpu-22222222-2222-4222-8222-222222222222"};
  std::vector<const Gpu*> hidden = gpus_not_visible(s, v);
  ASSERT_EQ(hidden.size(), 2u);
  EXPECT_EQ(hidden[0], &s.gpus[0]);
  EXPECT_EQ(hidden[1], &s.gpus[3]);
  v.uuids.clear();
  EXPECT_EQ(gpus_not_visible(s, v).size(), 4u);
}

}  // namespace
}  // namespace gpumap
