// renumbering_line: said exactly when some cuda:N is not nvidia-smi's GPU N (or not the outer
// layer's N), one line however many GPUs.
#include "resolve/renumbering.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

Snapshot gpus(uint32_t n) {
  Snapshot s;
  for (uint32_t i = 0; i < n; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = "GPU-" + std::string(7, static_cast<char>('a' + i % 6)) + std::to_string(i % 10) + "-0000-0000-0000-00000000000" +
             std::to_string(i % 10);
    s.gpus.push_back(g);
  }
  return s;
}

std::vector<std::string> uuids(const Snapshot& s, const std::vector<uint32_t>& idx) {
  std::vector<std::string> out;
  for (uint32_t i : idx) out.push_back(s.gpus[i].uuid);
  return out;
}

TEST(Renumbering, SaidWhenCudaNIsAnotherGpu) {
  Snapshot s = gpus(8);
  EXPECT_EQ(renumbering_line(s, uuids(s, {3, 5})), "cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5");
  EXPECT_EQ(renumbering_line(s, uuids(s, {1, 0})), "cuda:0 = nvidia-smi GPU 1, cuda:1 = GPU 0");
  EXPECT_EQ(renumbering_line(s, uuids(s, {0, 2})), "cuda:0 = nvidia-smi GPU 0, cuda:1 = GPU 2");
}

TEST(Renumbering, NotSaidForTheIdentityOrNoGpu) {
  Snapshot s = gpus(8);
  EXPECT_EQ(renumbering_line(s, uuids(s, {0, 1, 2, 3, 4, 5, 6, 7})), "");
  EXPECT_EQ(renumbering_line(s, uuids(s, {0, 1})), "");  // a prefix of the GPUs keeps their numbers
  EXPECT_EQ(renumbering_line(s, {}), "");
}

TEST(Renumbering, LongListsNameEightAndCountTheRest) {
  Snapshot s = gpus(12);
  std::string line = renumbering_line(s, uuids(s, {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("cuda:7 = GPU 4"), std::string::npos) << line;
  EXPECT_EQ(line.find("cuda:8 ="), std::string::npos) << line;
  EXPECT_NE(line.find("and 4 more (gpumap map lists them)"), std::string::npos) << line;
  // A list renumbered only past the eighth device is still said.
  EXPECT_NE(renumbering_line(s, uuids(s, {0, 1, 2, 3, 4, 5, 6, 7, 9})), "");
}

TEST(Renumbering, TheOuterLayersNumbers) {
  Snapshot s = gpus(2);
  GpuPlace container{true, {2, 3}};
  EXPECT_EQ(renumbering_line(s, uuids(s, {0, 1}), container),
            "cuda:0 = nvidia-smi GPU 0 (host GPU 2), cuda:1 = GPU 1 (host GPU 3)");
  GpuPlace same{true, {0, 1}};
  EXPECT_EQ(renumbering_line(s, uuids(s, {0, 1}), same), "");
  GpuPlace slurm;
  slurm.slurm_id = {4, 5};
  EXPECT_EQ(renumbering_line(s, uuids(s, {0, 1}), slurm), "cuda:0 = nvidia-smi GPU 0 (Slurm id 4), cuda:1 = GPU 1 (Slurm id 5)");
}

TEST(Renumbering, AMigDeviceIsNeverItsGpusNumber) {
  Snapshot s = gpus(2);
  s.gpus[0].mig_enabled = true;
  s.gpus[0].mig_devices = {{"MIG-11111111-2222-3333-4444-555555555555", "A100 MIG 3g.40gb", 1, 0, 40000, 0}};
  EXPECT_EQ(renumbering_line(s, {"MIG-11111111-2222-3333-4444-555555555555"}), "cuda:0 = nvidia-smi GPU 0 MIG device 0");
}

}  // namespace
}  // namespace gpumap
