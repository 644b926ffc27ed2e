// Every CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER vector measured on the real driver
// (tests/vectors/*.jsonl) must be reproduced by the resolver.
#include "resolve/cuda_view.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpumap {
namespace {

struct Vector {
  std::optional<std::string> cvd, cdo;
  std::string error;  // "" or "CUDA_ERROR_..."
  std::vector<std::string> uuids;
};

std::vector<Vector> load(const std::string& file) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/tests/vectors/" + file);
  std::vector<Vector> out;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    Vector v;
    if (!j["CUDA_VISIBLE_DEVICES"].is_null()) v.cvd = j["CUDA_VISIBLE_DEVICES"].get<std::string>();
    if (!j["CUDA_DEVICE_ORDER"].is_null()) v.cdo = j["CUDA_DEVICE_ORDER"].get<std::string>();
    if (!j["error"].is_null()) {
      v.error = j["error"].get<std::string>();
      v.error = v.error.substr(0, v.error.find('('));
    }
    v.uuids = j["uuids"].get<std::vector<std::string>>();
    out.push_back(v);
  }
  return out;
}

TEST(CudaViewVectors, MeasuredOnH200x2Driver580) {
  auto vectors = load("h200x2-driver-580.159.04.jsonl");
  ASSERT_GE(vectors.size(), 90u);
  std::vector<std::string> order = vectors[0].uuids;  // unset: every GPU in default order
  ASSERT_EQ(order.size(), 2u);
  for (const Vector& v : vectors) {
    CudaView view = predict_cuda_view(order, v.cdo, v.cvd);
    std::string label = "CUDA_VISIBLE_DEVICES=" + v.cvd.value_or("<unset>") + " CUDA_DEVICE_ORDER=" + v.cdo.value_or("<unset>");
    EXPECT_EQ(cuda_error_name(view.error) ? cuda_error_name(view.error) : "", v.error) << label;
    EXPECT_EQ(view.uuids, v.uuids) << label;
  }
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

}  // namespace
}  // namespace gpumap
