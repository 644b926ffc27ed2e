#include "fake/serving.h"

#include <gtest/gtest.h>

namespace gpumap::fake {
namespace {

SimHost two_gpus_with_faults(const std::string& faults) {
  return parse_host_file(R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"},
    {"name": "B", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000", "pci_bus_id": "0000:41:00.0"}],
    "faults": )" + faults + "}",
                         "faults.json");
}

// after/times count the matching calls only, from 0 for each plan (each load of the file).
TEST(Serving, FaultPlanCountsMatchingCallsPerFaultAndStartsAgainWithANewPlan) {
  SimHost h = two_gpus_with_faults(R"([{"call": "nvmlDeviceGetName", "gpu": 1, "error": 3, "after": 1, "times": 2},
                                       {"call": "*", "gpu": 0, "error": 999}])");
  FaultPlan plan(h.faults);
  EXPECT_EQ(plan.apply("nvmlDeviceGetName", 1), nullptr);  // the first matching call is let through
  EXPECT_EQ(plan.apply("nvmlDeviceGetUUID", 1), nullptr);  // another call: not counted against it
  const SimFault* f = plan.apply("nvmlDeviceGetName", 1);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->error, 3);
  ASSERT_NE(plan.apply("nvmlDeviceGetName", 1), nullptr);
  EXPECT_EQ(plan.apply("nvmlDeviceGetName", 1), nullptr);  // times 2: spent
  ASSERT_NE(plan.apply("nvmlDeviceGetUUID", 0), nullptr);   // "*" on GPU 0
  EXPECT_EQ(plan.apply("nvmlDeviceGetUUID", 0)->error, 999);
  EXPECT_EQ(plan.apply("nvmlInit", -1), nullptr);          // names a GPU: calls about none are spared

  FaultPlan again(h.faults);
  EXPECT_EQ(again.apply("nvmlDeviceGetName", 1), nullptr);
  EXPECT_NE(again.apply("nvmlDeviceGetName", 1), nullptr);
  EXPECT_EQ(FaultPlan().apply("nvmlInit", -1), nullptr);  // no file loaded: no faults
}

TEST(Serving, DevDirKeepsOnlyGpusWhoseNodeMayBeOpenedInPciOrder) {
  SimHost h = parse_host_file(R"({"dev_dir": "/fake/dev", "gpus": [
    {"name": "C", "uuid": "GPU-cccccccc-0000-0000-0000-000000000000", "pci_bus_id": "0000:c1:00.0", "minor_number": 0},
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0", "minor_number": 2},
    {"name": "B", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000", "pci_bus_id": "0000:41:00.0", "minor_number": 1}],
    "cuda_default_order": ["GPU-cccccccc-0000-0000-0000-000000000000", "GPU-bbbbbbbb-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000000"]})",
                              "devdir.json");
  EXPECT_EQ(h.dev_dir, "/fake/dev");
  static std::vector<std::string> asked;
  keep_openable_gpus(h, [](const std::string& node) {
    asked.push_back(node);
    return node != "/fake/dev/nvidia1";  // a device cgroup denies GPU B's node
  });
  ASSERT_EQ(h.gpus.size(), 2u);
  EXPECT_EQ(h.gpus[0].uuid, "GPU-aaaaaaaa-0000-0000-0000-000000000000");  // NVML index 0: PCI order among the GPUs left
  EXPECT_EQ(h.gpus[0].minor_number, 2u);
  EXPECT_EQ(h.gpus[1].uuid, "GPU-cccccccc-0000-0000-0000-000000000000");
  EXPECT_EQ(h.cuda_default_order, (std::vector<std::string>{"GPU-cccccccc-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000000"}));
  EXPECT_EQ(asked, (std::vector<std::string>{"/fake/dev/nvidia2", "/fake/dev/nvidia1", "/fake/dev/nvidia0"}));

  SimHost plain = parse_host_file(R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"}]})",
                                  "no-devdir.json");
  keep_openable_gpus(plain, [](const std::string&) { return false; });
  EXPECT_EQ(plain.gpus.size(), 1u);  // no dev_dir: every GPU stays
}

}  // namespace
}  // namespace gpumap::fake
