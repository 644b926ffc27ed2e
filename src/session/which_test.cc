#include "session/which.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

TEST(CudaTargets, AMigModeGpuStandsForItsMigDevicesInPlace) {
  Snapshot s;
  s.gpus.resize(3);
  const char* u[] = {"GPU-00000000-0000-4000-8000-000000000000", "GPU-11111111-1111-4111-8111-111111111111",
                     "GPU-22222222-2222-4222-8222-222222222222"};
  for (uint32_t i = 0; i < 3; ++i) s.gpus[i].nvml_index = i, s.gpus[i].uuid = u[i];
  s.gpus[1].mig_enabled = true;
  s.gpus[1].mig_devices = {{"MIG-aaaaaaaa-0000-4000-8000-000000000000", "m0", 1, 0, 100, 0},
                           {"MIG-bbbbbbbb-0000-4000-8000-000000000000", "m1", 2, 0, 100, 0}};
  EXPECT_EQ(cuda_targets(s, {u[2], u[1], u[0]}),
            (std::vector<std::string>{u[2], "MIG-aaaaaaaa-0000-4000-8000-000000000000",
                                      "MIG-bbbbbbbb-0000-4000-8000-000000000000", u[0]}));
  s.gpus[1].mig_devices.clear();  // MIG mode without instances: the GPU itself is named (CUDA shows nothing)
  EXPECT_EQ(cuda_targets(s, {u[1]}), std::vector<std::string>{u[1]});
  EXPECT_EQ(cuda_targets(s, {"GPU-unknown"}), std::vector<std::string>{"GPU-unknown"});
}

}  // namespace
}  // namespace gpumap
