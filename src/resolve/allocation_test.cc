// The allowed set from Slurm's ids: on the whole node, under a device cgroup (some minors hidden),
// and where the ids cannot be placed.
#include "resolve/allocation.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

// `count` GPUs with these minor numbers (nvidia-smi order = the order given), UUIDs GPU-...0<minor>.
Snapshot node(const std::vector<uint32_t>& minors, bool with_minors = true) {
  Snapshot s;
  for (uint32_t i = 0; i < minors.size(); ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = "GPU-00000000-0000-0000-0000-0000000000" + std::to_string(10 + minors[i]);
    if (with_minors) g.minor_number = minors[i];
    s.gpus.push_back(g);
  }
  return s;
}

Allocation read(const Snapshot& s, const std::vector<std::string>& vars) {
  return read_allocation(s, parse_launcher_env(Environment::from_strings(vars)));
}

TEST(Allocation, NoSlurmAllowsEveryGpu) {
  Snapshot s = node({0, 1, 2, 3});
  Allocation a = read(s, {});
  EXPECT_EQ(a.reading, SlurmIdReading::kNone);
  EXPECT_FALSE(a.restricts);
  EXPECT_EQ(a.uuids.size(), 4u);
  EXPECT_TRUE(a.allows(s, s.gpus[3].uuid));
  EXPECT_FALSE(a.allows(s, "GPU-ffffffff-0000-0000-0000-000000000000"));
  EXPECT_EQ(a.setting(), "");
  // Ids that do not parse are no allocation (launcher rules report the bad value).
  EXPECT_EQ(read(s, {"SLURM_STEP_GPUS=two"}).reading, SlurmIdReading::kNone);
}

TEST(Allocation, OnTheWholeNodeIdKIsTheKthMinor) {
  Snapshot s = node({0, 1, 2, 3, 4, 5, 6, 7});
  Allocation a = read(s, {"SLURM_STEP_GPUS=3,2", "SLURM_JOB_GPUS=0-3"});
  EXPECT_EQ(a.variable, "SLURM_STEP_GPUS");  // the step's ids win over the job's
  EXPECT_EQ(a.reading, SlurmIdReading::kPositions);
  EXPECT_TRUE(a.restricts);
  ASSERT_EQ(a.uuids.size(), 2u);
  EXPECT_EQ(a.uuids[0], s.gpus[2].uuid);  // nvidia-smi order, whatever the ids' order
  EXPECT_EQ(a.uuids[1], s.gpus[3].uuid);
  EXPECT_EQ(a.id_uuids, (std::vector<std::string>{s.gpus[3].uuid, s.gpus[2].uuid}));
  EXPECT_FALSE(a.allows(s, s.gpus[5].uuid));
  EXPECT_EQ(a.slurm_id_of(s.gpus[3].uuid), 3u);
  EXPECT_EQ(a.words(s), "SLURM_STEP_GPUS=3,2 (nvidia-smi GPUs 2, 3 here)");
  // Job ids when the step has none.
  Allocation job = read(s, {"SLURM_JOB_GPUS=5"});
  EXPECT_EQ(job.variable, "SLURM_JOB_GPUS");
  EXPECT_EQ(job.uuids, std::vector<std::string>{s.gpus[5].uuid});
  // Minor numbers in another order than nvidia-smi's: id k is still the k-th minor.
  Snapshot swapped = node({1, 0, 2, 3});
  EXPECT_EQ(read(swapped, {"SLURM_STEP_GPUS=0"}).uuids, std::vector<std::string>{swapped.gpus[1].uuid});
  // Without minor numbers: nvidia-smi's order.
  Snapshot bare = node({0, 1, 2, 3}, false);
  EXPECT_EQ(read(bare, {"SLURM_STEP_GPUS=1"}).uuids, std::vector<std::string>{bare.gpus[1].uuid});
}

TEST(Allocation, UnderADeviceCgroupIdKIsTheGpuWithMinorK) {
  // The step sees two GPUs of eight, whose /dev/nvidiaN are 4 and 5, renumbered 0 and 1.
  Snapshot s = node({4, 5});
  Allocation a = read(s, {"SLURM_STEP_GPUS=4,5"});
  EXPECT_EQ(a.reading, SlurmIdReading::kMinors);
  EXPECT_FALSE(a.restricts);  // every GPU it sees is its own
  EXPECT_EQ(a.uuid_of_slurm_id(4), s.gpus[0].uuid);
  EXPECT_EQ(a.uuid_of_slurm_id(5), s.gpus[1].uuid);
  EXPECT_EQ(a.uuid_of_slurm_id(0), "");
  EXPECT_EQ(a.slurm_id_of(s.gpus[1].uuid), 5u);
  // A job-level cgroup (GPUs 2-5) with a step of two of them: the step's are allowed, the others not.
  Snapshot job = node({2, 3, 4, 5});
  Allocation step = read(job, {"SLURM_STEP_GPUS=4,5", "SLURM_JOB_GPUS=2-5"});
  EXPECT_EQ(step.reading, SlurmIdReading::kMinors);
  EXPECT_TRUE(step.restricts);
  EXPECT_EQ(step.uuids, (std::vector<std::string>{job.gpus[2].uuid, job.gpus[3].uuid}));
}

TEST(Allocation, IdsThatCannotBePlaced) {
  // Ids past the GPUs seen and no minors to match: a device cgroup left exactly the allocation.
  Snapshot two = node({0, 1});
  Allocation a = read(two, {"SLURM_STEP_GPUS=6,7"});
  EXPECT_EQ(a.reading, SlurmIdReading::kCgroup);
  EXPECT_FALSE(a.restricts);
  EXPECT_EQ(a.uuids.size(), 2u);
  EXPECT_NE(a.words(two).find("device cgroup"), std::string::npos) << a.words(two);
  // More GPUs seen than allocated and the ids place none: nothing can be told, nothing restricted.
  Snapshot four = node({0, 1, 2, 3});
  Allocation u = read(four, {"SLURM_STEP_GPUS=6,7"});
  EXPECT_EQ(u.reading, SlurmIdReading::kUnknown);
  EXPECT_FALSE(u.restricts);
  EXPECT_EQ(u.uuids.size(), 4u);
}

TEST(Allocation, AMigDeviceIsAllowedWithItsGpu) {
  Snapshot s = node({0, 1});
  s.gpus[1].mig_enabled = true;
  s.gpus[1].mig_devices = {{"MIG-11111111-2222-3333-4444-555555555555", "A100 MIG 3g.40gb", 1, 0, 40000, 0}};
  Allocation a = read(s, {"SLURM_STEP_GPUS=1"});
  EXPECT_TRUE(a.allows(s, "MIG-11111111-2222-3333-4444-555555555555"));
  Allocation other = read(s, {"SLURM_STEP_GPUS=0"});
  EXPECT_FALSE(other.allows(s, "MIG-11111111-2222-3333-4444-555555555555"));
  EXPECT_EQ(allowed_only(s, other, {s.gpus[1].uuid, s.gpus[0].uuid}), std::vector<std::string>{s.gpus[0].uuid});
}

}  // namespace
}  // namespace gpumap
