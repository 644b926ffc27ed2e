#include "resolve/gpu_selector.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

Snapshot host() {
  Snapshot s;
  const char* uuids[] = {"GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2", "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b",
                         "GPU-df9e0000-6758-b581-24f3-9f00d2606170"};
  const char* pcis[] = {"00000000:3B:00.0", "00000000:5D:00.0", "00000000:AF:00.0"};
  for (uint32_t i = 0; i < 3; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = uuids[i];
    g.pci_bus_id = pcis[i];
    g.pci = parse_pci_address(pcis[i]);
    g.name = "NVIDIA H200";
    s.gpus.push_back(g);
  }
  return s;
}

TEST(GpuSelector, IndexUuidPrefixAndPciForms) {
  Snapshot s = host();
  auto got = select_gpus(s, {"2", "GPU-28554FFD", "3b:00.0", "0000:5d:00.0", "df9ecf4c"});
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0]->nvml_index, 2u);
  EXPECT_EQ(got[1]->nvml_index, 0u);
  EXPECT_EQ(got[2]->nvml_index, 0u);
  EXPECT_EQ(got[3]->nvml_index, 1u);
  EXPECT_EQ(got[4]->nvml_index, 1u);
  EXPECT_EQ(select_gpus(s, {"0,2"}).size(), 2u);
  EXPECT_EQ(select_one_gpu(s, "GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2")->nvml_index, 0u);
}

TEST(GpuSelector, BadAndAmbiguousSpecsAreUsageErrors) {
  Snapshot s = host();
  for (const char* bad : {"7", "GPU-ffff", "00000000:01:00.0", "GPU-df9e", "99999999999"}) {
    try {
      select_one_gpu(s, bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      EXPECT_NE(e.hint().find("GPU-28554ffd"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace gpumap
