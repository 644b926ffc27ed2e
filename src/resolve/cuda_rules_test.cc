// Every CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER vector measured on the real driver
// (tests/vectors/*.jsonl) must be reproduced by the resolver.
#include "resolve/cuda_rules.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vector_file.h"

namespace gpumap {
namespace {

using testing::DriverVector;

// Every file: its first line (both variables unset) gives the driver's default order, and every
// line must come out as the driver answered.  New files from tools/device/checks/difftest.sh are checked
// as soon as they are added.
TEST(CudaViewVectors, EveryMeasuredVectorFile) {
  std::vector<std::string> files = testing::vector_files(GPUMAP_SOURCE_DIR);
  ASSERT_FALSE(files.empty());
  size_t checked = 0;
  for (const std::string& file : files) {
    std::vector<DriverVector> vectors = testing::load_vectors(file);
    ASSERT_FALSE(vectors.empty()) << file;
    ASSERT_TRUE(!vectors[0].cvd && !vectors[0].cdo && vectors[0].error.empty()) << file << ": the first line is not the baseline";
    std::vector<std::string> order = vectors[0].uuids;  // unset: every GPU in default order
    for (const DriverVector& v : vectors) {
      CudaView view = predict_cuda_view(order, v.cdo, v.cvd);
      EXPECT_EQ(cuda_error_name(view.error) ? cuda_error_name(view.error) : "", v.error) << file << ": " << v.label();
      EXPECT_EQ(view.uuids, v.uuids) << file << ": " << v.label();
      ++checked;
    }
  }
  EXPECT_GE(checked, 268u);  // every line of tests/vectors/*.jsonl
}

TEST(CudaViewVectors, MeasuredOnH200x2Driver580) {
  auto vectors = testing::load_vectors(std::string(GPUMAP_SOURCE_DIR) + "/tests/vectors/h200x2-driver-580.159.04.jsonl");
  ASSERT_GE(vectors.size(), 101u);
  EXPECT_EQ(vectors[0].uuids.size(), 2u);
}

const std::vector<std::string> kTwo = {"GPU-914d0ae8-3356-4f37-86c1-2d59241a14f0",
                                       "GPU-1722a9ae-1e34-595f-b548-742051b181a7"};

TEST(CudaView, CutListReportsEveryLaterEntryAsIgnored) {
  CudaView v = predict_cuda_view(kTwo, std::nullopt, std::string("0,5,1"));
  ASSERT_EQ(v.entries.size(), 3u);
  EXPECT_EQ(v.entries[0].outcome, EntryOutcome::kVisible);
  EXPECT_EQ(v.entries[1].outcome, EntryOutcome::kOutOfRange);
  EXPECT_EQ(v.entries[2].outcome, EntryOutcome::kAfterCut);
  EXPECT_EQ(v.cut_at, 1u);
}

TEST(CudaView, AmbiguousPrefixEndsTheList) {
  std::vector<std::string> same_start = {"GPU-aaaa0000-0000-0000-0000-000000000000", "GPU-aaaa1111-0000-0000-0000-000000000000"};
  CudaView v = predict_cuda_view(same_start, std::nullopt, std::string("GPU-aaaa"));
  EXPECT_EQ(v.error, CudaInitError::kNoDevice);
  EXPECT_EQ(v.entries[0].outcome, EntryOutcome::kAmbiguous);
  EXPECT_EQ(v.entries[0].candidates.size(), 2u);
  v = predict_cuda_view(same_start, std::nullopt, std::string("GPU-aaaa1"));
  EXPECT_EQ(v.uuids, std::vector<std::string>{same_start[1]});
}

TEST(CudaView, DuplicateThroughPrefixFails) {
  CudaView v = predict_cuda_view(kTwo, std::nullopt, std::string("GPU-1722," + kTwo[1]));
  EXPECT_EQ(v.error, CudaInitError::kInvalidDevice);
  EXPECT_EQ(v.entries[1].outcome, EntryOutcome::kDuplicate);
  EXPECT_TRUE(v.uuids.empty());
}

TEST(CudaView, InvalidOrderWinsOverEverything) {
  CudaView v = predict_cuda_view(kTwo, std::string(""), std::string("5"));
  EXPECT_EQ(v.error, CudaInitError::kInvalidDevice);
  EXPECT_NE(v.error_reason.find("empty"), std::string::npos);
}

TEST(CudaView, NoGpusAtAllIsNoDevice) {
  CudaView v = predict_cuda_view({}, std::nullopt, std::nullopt);
  EXPECT_EQ(v.error, CudaInitError::kNoDevice);
}

TEST(CudaView, MigUuidsMatchByPrefixToo) {
  std::vector<std::string> devs = {"MIG-0123abcd-0000-0000-0000-000000000000", "GPU-4567abcd-0000-0000-0000-000000000000"};
  EXPECT_EQ(predict_cuda_view(devs, std::nullopt, std::string("MIG-0123")).uuids, std::vector<std::string>{devs[0]});
  // Measured: the MIG- word also matches a plain GPU's UUID.
  EXPECT_EQ(predict_cuda_view(devs, std::nullopt, std::string("MIG-4567")).uuids, std::vector<std::string>{devs[1]});
}

// Measured (tests/vectors/h200-vm3-*, h200-vm4-*): a first entry that starts with MIG- and is 1032
// bytes or longer crashes cuInit; 1031 bytes, the same entry second, another word, or a value the
// driver ignores (2625 bytes or more) do not.
TEST(CudaViewRules, ALongFirstMigEntryCrashesTheDriver) {
  const std::vector<std::string> order = {"GPU-df71818e-792d-a40d-e8f9-12f85bf764dd"};
  auto entry = [](const std::string& word, size_t bytes) { return word + std::string(bytes - word.size(), 'x'); };
  CudaView crash = predict_cuda_view(order, std::nullopt, entry("MIG-", kMigEntryCrashBytes));
  EXPECT_EQ(crash.error, CudaInitError::kDriverCrash);
  EXPECT_STREQ(cuda_error_name(crash.error), "DRIVER_CRASH");
  EXPECT_TRUE(crash.uuids.empty());
  EXPECT_NE(crash.error_reason.find("1032 bytes long"), std::string::npos) << crash.error_reason;
  EXPECT_EQ(predict_cuda_view(order, std::string("PCI_BUS_ID"), entry("MIG-", 1100) + ",0").error,
            CudaInitError::kDriverCrash);
  EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry("MIG-", kMigEntryCrashBytes - 1)).error, CudaInitError::kNoDevice);
  EXPECT_EQ(predict_cuda_view(order, std::nullopt, "0," + entry("MIG-", 2000)).uuids, order);
  EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry("mig-", 2000)).error, CudaInitError::kNoDevice);
  EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry(" MIG-", 2000)).error, CudaInitError::kNoDevice);
  EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry("GPU-", 2000)).error, CudaInitError::kNoDevice);
  EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry("MIG-", kCudaVisibleDevicesIgnoredBytes)).uuids, order);
  // The legacy MIG-GPU- form is turned down at every length (tests/vectors/h200-vm5-*); a near miss
  // of it is not that form and crashes.
  for (size_t n : {kMigEntryCrashBytes, size_t{2000}, kCudaVisibleDevicesIgnoredBytes - 1})
    EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry("MIG-GPU-", n)).error, CudaInitError::kNoDevice) << n;
  for (const char* near : {"MIG-GPU", "MIG-GPUx", "MIG-gpu-"})
    EXPECT_EQ(predict_cuda_view(order, std::nullopt, entry(near, kMigEntryCrashBytes)).error, CudaInitError::kDriverCrash)
        << near;
  EXPECT_EQ(cuda_error_from_name("DRIVER_CRASH"), CudaInitError::kDriverCrash);
}

}  // namespace
}  // namespace gpumap
