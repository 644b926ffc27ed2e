#include "findings/rank_rules.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

// Local rank 2 of a process that sees four GPUs (cuda:N = nvidia-smi GPU N); its own is GPU 2.
RankedProcess rank2(std::vector<RankHeld> held) {
  RankedProcess p;
  p.who = "pid 7";
  p.variable = "OMPI_COMM_WORLD_LOCAL_RANK";
  p.rank = 2;
  p.cuda_devices = 4;
  p.own_index = 2;
  p.own_gpu = "nvidia-smi GPU 2 (GPU-2)";
  p.held = std::move(held);
  return p;
}

RankHeld on(uint32_t gpu, std::optional<uint64_t> mib) {
  return {gpu, "nvidia-smi GPU " + std::to_string(gpu) + " (GPU-" + std::to_string(gpu) + ")", static_cast<int>(gpu), mib};
}

TEST(RankRules, WrongGpusAreOneFindingOnTheFirst) {
  std::vector<RankFinding> f = rank_findings(rank2({on(0, 100), on(1, 200)}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.id, "rank-on-wrong-gpu");
  EXPECT_EQ(f[0].held, 0u);
  EXPECT_NE(f[0].finding.message.find("nvidia-smi GPU 0 (GPU-0), its cuda:0 (100 MiB); nvidia-smi GPU 1 (GPU-1), its cuda:1 (200 MiB)"),
            std::string::npos)
      << f[0].finding.message;
  EXPECT_NE(f[0].finding.message.find("OMPI_COMM_WORLD_LOCAL_RANK=2"), std::string::npos);
  EXPECT_NE(f[0].finding.note.find("OMPI_COMM_WORLD_LOCAL_RANK"), std::string::npos);
}

TEST(RankRules, OwnGpuAndOthersIsAStrayContextOnTheFirstOther) {
  std::vector<RankFinding> f = rank_findings(rank2({on(0, 300), on(2, 900), on(3, std::nullopt)}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.id, "stray-context");
  EXPECT_EQ(f[0].held, 0u);
  EXPECT_NE(f[0].finding.message.find("900 MiB"), std::string::npos) << f[0].finding.message;
  EXPECT_NE(f[0].finding.message.find("its cuda:0 (300 MiB); nvidia-smi GPU 3 (GPU-3), its cuda:3 (memory (NVML gives no amount))"),
            std::string::npos)
      << "a listed GPU without an amount still holds a context: " << f[0].finding.message;
}

TEST(RankRules, NothingOnItsOwnGpuAloneOrWithNoMemoryElsewhere) {
  EXPECT_TRUE(rank_findings(rank2({on(2, 500)})).empty());
  EXPECT_TRUE(rank_findings(rank2({on(2, 500), on(0, 0)})).empty()) << "0 MiB is no memory";
  EXPECT_TRUE(rank_findings(rank2({on(0, 0)})).empty());
}

TEST(RankRules, NothingForANarrowedRankARankPastItsGpusOrAGpuOutsideItsView) {
  RankedProcess one = rank2({on(0, 100)});
  one.cuda_devices = 1;
  one.rank = 0;
  one.own_index = 1;
  EXPECT_TRUE(rank_findings(one).empty()) << "sees one GPU";
  RankedProcess past = rank2({on(0, 100)});
  past.rank = 4;
  past.own_index.reset();
  EXPECT_TRUE(rank_findings(past).empty()) << "cuda:4 does not exist: local-rank-exceeds-visible's business";
  RankHeld outside = on(1, 100);
  outside.cuda_ordinal.reset();
  EXPECT_TRUE(rank_findings(rank2({on(0, 100), outside})).empty());
}

TEST(RankRules, AGpuInBothProcessListsCountsOnce) {
  std::vector<RankFinding> f = rank_findings(rank2({on(0, 100), on(0, 100)}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding.message.find("(100 MiB); nvidia-smi GPU 0"), std::string::npos) << f[0].finding.message;
}

}  // namespace
}  // namespace gpumap
