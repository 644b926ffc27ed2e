#include "session/launch_plan.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

TEST(RankSlice, EachRankGetsItsOwnConsecutiveGpus) {
  std::vector<std::string> view = {"GPU-a", "GPU-b", "GPU-c", "GPU-d"};
  EXPECT_EQ(rank_slice(view, {"LOCAL_RANK", 1, ""}, 1), std::vector<std::string>{"GPU-b"});
  EXPECT_EQ(rank_slice(view, {"SLURM_LOCALID", 1, ""}, 2), (std::vector<std::string>{"GPU-c", "GPU-d"}));
  try {
    rank_slice(view, {"LOCAL_RANK", 2, ""}, 2);
    FAIL() << "rank 2 of 2 GPUs each fits in 4 GPUs only up to rank 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUnavailable);
    EXPECT_NE(std::string(e.what()).find("local rank 2 (LOCAL_RANK) needs cuda:4-5 but this job sees 4 GPUs"),
              std::string::npos)
        << e.what();
  }
}

TEST(BindRank, KeepVisibleRotatesTheWholeViewSoTheRanksOwnGpusComeFirst) {
  std::vector<std::string> view = {"GPU-a", "GPU-b", "GPU-c", "GPU-d"};
  RankGpus plain = bind_rank(view, {"LOCAL_RANK", 1, ""}, 1, false);
  EXPECT_EQ(plain.own, std::vector<std::string>{"GPU-b"});
  EXPECT_EQ(plain.visible, std::vector<std::string>{"GPU-b"});
  RankGpus r0 = bind_rank(view, {"LOCAL_RANK", 0, ""}, 1, true);
  EXPECT_EQ(r0.own, std::vector<std::string>{"GPU-a"});
  EXPECT_EQ(r0.visible, view);
  RankGpus r3 = bind_rank(view, {"LOCAL_RANK", 3, ""}, 1, true);
  EXPECT_EQ(r3.own, std::vector<std::string>{"GPU-d"});
  EXPECT_EQ(r3.visible, (std::vector<std::string>{"GPU-d", "GPU-a", "GPU-b", "GPU-c"}));
  RankGpus two = bind_rank(view, {"OMPI_COMM_WORLD_LOCAL_RANK", 1, ""}, 2, true);
  EXPECT_EQ(two.own, (std::vector<std::string>{"GPU-c", "GPU-d"}));
  EXPECT_EQ(two.visible, (std::vector<std::string>{"GPU-c", "GPU-d", "GPU-a", "GPU-b"}));
  EXPECT_THROW(bind_rank(view, {"LOCAL_RANK", 4, ""}, 1, true), Error);  // too few GPUs: as without it
}

TEST(CpusFor, GpusAndMigDevicesBindToTheirGpusCpusWithinTheInheritedSet) {
  Snapshot s;
  s.gpus.resize(2);
  s.gpus[0].uuid = "GPU-00000000-0000-0000-0000-000000000001";
  s.gpus[0].cpu_affinity = "0-3";
  s.gpus[1].uuid = "GPU-00000000-0000-0000-0000-000000000002";
  s.gpus[1].cpu_affinity = "4-7";
  s.gpus[1].mig_enabled = true;
  s.gpus[1].mig_devices.push_back({});
  s.gpus[1].mig_devices[0].uuid = "MIG-00000000-0000-0000-0000-0000000000aa";
  std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(cpus_for(s, {s.gpus[0].uuid}, all).cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(cpus_for(s, {"MIG-00000000-0000-0000-0000-0000000000aa"}, all).cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(cpus_for(s, {s.gpus[0].uuid}, {2, 3, 4}).cpus, (std::vector<int>{2, 3}));  // within what was inherited
  CpuChoice none = cpus_for(s, {s.gpus[0].uuid}, {5, 6});
  EXPECT_TRUE(none.cpus.empty());
  EXPECT_FALSE(none.why_not.empty());
  CpuChoice unknown = cpus_for(s, {"GPU-ffffffff-0000-0000-0000-000000000000"}, all);
  EXPECT_TRUE(unknown.cpus.empty());
  EXPECT_FALSE(unknown.why_not.empty());
}

}  // namespace
}  // namespace gpumap
