// The library's operations on its own process (session/self.h) in process, on FakeSession hosts:
// the answers libgpumap.so's devices, verify, locate and pin write, refusals included.  This
// test process has not started CUDA, so every answer is the prediction from the environment
// (the live path is asserted on the GPU host: tools/device/checks/operations_layer_real.sh).
#include "session/self.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "env/device_value.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

using testing::code_of;

DeviceItem item(DeviceItem::Role role, std::optional<int64_t> number, std::string text) {
  DeviceItem d;
  d.role = role;
  d.number = number;
  d.text = text;
  d.what = "device_map['x']";
  d.shown = number ? std::to_string(*number) : "'" + text + "'";
  return d;
}

TEST(SelfCheckDevices, NoDeviceAndCudaKeysAreRefusedBeforeAnyGpuIsCounted) {
  FakeSession f("h200x2", {"CUDA_DEVICE_ORDER=pci_bus_id"});  // CUDA would fail: never asked
  DeviceItemsAnswer bad = check_devices_here(f.session(), {item(DeviceItem::Role::kValue, std::nullopt, "gpu0")});
  ASSERT_TRUE(bad.refusal);
  EXPECT_EQ(bad.refused_as, "value");
  EXPECT_EQ(bad.refusal->message, "device_map['x']: 'gpu0' is not " + std::string(kDeviceWords));
  DeviceItemsAnswer key = check_devices_here(f.session(), {item(DeviceItem::Role::kPhysicalKey, std::nullopt, "cuda:1")});
  ASSERT_TRUE(key.refusal);
  EXPECT_NE(key.refusal->message.find("is not recognized"), std::string::npos) << key.refusal->message;
  DeviceItemsAnswer gpu = check_devices_here(f.session(), {item(DeviceItem::Role::kKey, 0, "")});
  ASSERT_TRUE(gpu.refusal);
  EXPECT_EQ(gpu.refusal->code, kExitCudaWouldFail);
}

TEST(SelfVerify, ASpecThatNamesNoGpuIsAUsageError) {
  FakeSession f("h200x2");
  EXPECT_EQ(code_of([&] { verify_here(f.session(), {"7"}, false); }), kExitUsage);
  EXPECT_EQ(code_of([&] { verify_here(f.session(), {"GPU-nope"}, false); }), kExitUsage);
}

}  // namespace
}  // namespace gpumap
