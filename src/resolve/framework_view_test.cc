// torch's NVML-based view (resolve/framework_view.h) against every framework vector measured on a
// GPU host (tests/vectors/framework/*.jsonl: torch 2.11.0, driver 580.159.04, written by
// tools/device/checks/framework_view.py), with the driver's side (resolve/cuda_rules.h) checked beside it
// on the same values, so a vector pins both layers and where they part.
#include "resolve/framework_view.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "resolve/cuda_rules.h"
#include "../../tests/vector_file.h"

namespace gpumap {
namespace {

struct FrameworkVector {
  std::optional<std::string> cvd, cdo;
  nlohmann::json driver, torch, torch_nvml_check;
  std::string label() const {
    return "CUDA_VISIBLE_DEVICES=" + (cvd ? "`" + cvd->substr(0, 120) + "`" : "<unset>") +
           " CUDA_DEVICE_ORDER=" + (cdo ? "`" + cdo->substr(0, 40) + "`" : "<unset>");
  }
};

std::vector<std::string> framework_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUMAP_SOURCE_DIR) + "/tests/vectors/framework"))
    if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<FrameworkVector> load(const std::string& path) {
  std::ifstream in(path);
  std::vector<FrameworkVector> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    FrameworkVector v;
    v.cvd = testing::vector_value(j, "CUDA_VISIBLE_DEVICES");
    v.cdo = testing::vector_value(j, "CUDA_DEVICE_ORDER");
    v.driver = j["driver"];
    v.torch = j["torch"];
    v.torch_nvml_check = j["torch_nvml_check"];
    out.push_back(v);
  }
  return out;
}

TEST(TorchViewVectors, EveryMeasuredFrameworkVector) {
  std::vector<std::string> files = framework_files();
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    std::vector<FrameworkVector> vs = load(file);
    ASSERT_GT(vs.size(), 50u) << file;
    // The first line is the baseline: both variables unset, every GPU (one H200 here).
    std::vector<std::string> nvml = vs[0].driver["uuids"].get<std::vector<std::string>>();
    ASSERT_FALSE(vs[0].cvd.has_value());
    size_t differ = 0, raises = 0;
    for (const FrameworkVector& v : vs) {
      SCOPED_TRACE(file + ": " + v.label());
      // The driver's side, on the same value: the resolver already models it.
      CudaView d = predict_cuda_view(nvml, v.cdo, v.cvd);
      if (v.driver["error"] == "TIMEOUT" || v.driver["error"] == "DRIVER_CRASH") continue;
      ASSERT_EQ(d.error == CudaInitError::kNone ? std::string() : std::string(cuda_error_name(d.error)),
                v.driver["error"].is_null() ? std::string() : v.driver["error"].get<std::string>());
      if (d.error == CudaInitError::kNone) { ASSERT_EQ(d.uuids, v.driver["uuids"].get<std::vector<std::string>>()); }

      TorchView t = predict_torch_view(nvml, v.cvd);
      for (const nlohmann::json* side : {&v.torch, &v.torch_nvml_check}) {
        const nlohmann::json& dc = (*side)["device_count"];
        if (dc.is_object()) {
          EXPECT_EQ(t.raises, dc["raises"].get<std::string>());
          ++raises;
        } else {
          EXPECT_EQ(t.raises, "");
          EXPECT_EQ(torch_device_count(t, d), std::optional<unsigned>(dc.get<unsigned>()));
        }
        // torch's own NVML count before the driver fallback: -1 exactly where it defers.
        if ((*side)["device_count_nvml"].is_number()) {
          EXPECT_EQ(t.defers_to_driver, (*side)["device_count_nvml"].get<int>() < 0);
        }
        // The driver, through the runtime, says what the driver probe said.
        if ((*side)["cuda_getDeviceCount"].is_number()) {
          EXPECT_EQ(driver_device_count(d), (*side)["cuda_getDeviceCount"].get<unsigned>());
        }
      }
      // is_available(): the driver's count without the NVML check, device_count() > 0 with it.
      if (v.torch["is_available"].is_boolean()) { EXPECT_EQ(v.torch["is_available"].get<bool>(), driver_device_count(d) > 0); }
      if (v.torch_nvml_check["is_available"].is_boolean()) {
        std::optional<unsigned> n = torch_device_count(t, d);
        ASSERT_TRUE(n.has_value());
        EXPECT_EQ(v.torch_nvml_check["is_available"].get<bool>(), *n > 0);
      } else {
        EXPECT_NE(t.raises, "");  // it raised where torch's parser raises
      }
      if (torch_differs_from_driver(t, d)) ++differ;
    }
    // What the measurement found (docs/framework-rules.md): torch and the driver part on many
    // values, and torch raises on some.  A model that agreed everywhere would be wrong.
    EXPECT_GE(differ, 30u) << file;
    EXPECT_GE(raises, 8u) << file;
  }
}

TorchView torch(const std::optional<std::string>& cvd, size_t gpus = 2) {
  std::vector<std::string> nvml = {"GPU-f4aed11f-2fb3-1b4c-4937-2597a4f01bba", "GPU-28554ffd-0a6e-4a5e-9e8c-3f1f8a7d2c10"};
  nvml.resize(gpus);
  return predict_torch_view(nvml, cvd);
}

TEST(TorchView, TheIssueCasesOnTwoGpus) {
  EXPECT_EQ(torch(std::nullopt).device_count, 2u);
  EXPECT_EQ(torch("").device_count, 0u);
  EXPECT_EQ(torch("1,0").device_count, 2u);
  EXPECT_EQ(torch("0,2,1").device_count, 1u);         // trimmed at the first index past NVML's count
  EXPECT_EQ(torch("0,5,0").device_count, 0u);         // the driver: [0]; torch: a repeat empties the list
  EXPECT_EQ(torch("00,0").device_count, 0u);          // 00 and 0 are the same int
  EXPECT_EQ(torch("-0").device_count, 1u);
  EXPECT_EQ(torch("-1").device_count, 0u);
  EXPECT_EQ(torch("\u0661").device_count, 1u);        // Arabic-Indic 1: int() reads it; the driver does not
  EXPECT_EQ(torch("\u00a01").device_count, 1u);       // Python strips a no-break space
  EXPECT_EQ(torch("GPU-28554ffd").device_count, 1u);  // a prefix as NVML writes it
  EXPECT_EQ(torch("GPU-28554FFD").device_count, 0u);  // case counts for torch
  EXPECT_EQ(torch("GPU-28554ffd0a6e").device_count, 0u);  // dashes count for torch
  EXPECT_EQ(torch("GPU-").device_count, 0u);          // the start of both: ambiguous
  EXPECT_EQ(torch("GPU-", 1).device_count, 1u);       // the start of the only one
  EXPECT_EQ(torch("GPU-f4ae,GPU-f4aed11f").device_count, 0u);  // the same GPU twice
  EXPECT_EQ(torch("GPU-28554ffd,1").device_count, 1u);
  EXPECT_TRUE(torch("MIG-28554ffd").defers_to_driver);
  EXPECT_EQ(torch("+").raises, "ValueError: invalid literal for int() with base 10: '+'");
  EXPECT_EQ(torch("0,-").raises, "ValueError: invalid literal for int() with base 10: '-'");
  EXPECT_EQ(torch("-1,+").raises, "");                 // the list ended before it
  EXPECT_EQ(torch("\u00b2").raises, "ValueError: invalid literal for int() with base 10: '\u00b2'");
  EXPECT_NE(torch(std::string(4301, '0')).raises.find("value has 4301 digits"), std::string::npos);
  EXPECT_EQ(torch(std::string(4300, '0')).device_count, 1u);
  EXPECT_EQ(torch(std::string("\xff" "0")).device_count, 0u);  // a byte that is not UTF-8 is no digit
}

}  // namespace
}  // namespace gpumap
