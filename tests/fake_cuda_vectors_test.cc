// The fake libcuda (src/fake/fake_cuda.cc, written apart from the resolver) must reproduce
// every vector measured on the real driver, through the same dlopen path gpumap uses.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "driver/cuda_probe.h"

namespace gpumap::testing {
namespace {

TEST(FakeCudaVectors, EveryMeasuredVectorThroughTheFakeLibrary) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/tests/vectors/h200x2-driver-580.159.04.jsonl");
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    std::vector<std::string> env = {"GPUMAP_FAKE_HOST=" + host_path("measured-h200x2")};
    std::string label;
    for (const char* var : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"})
      if (!j[var].is_null()) {
        env.push_back(std::string(var) + "=" + j[var].get<std::string>());
        label += std::string(var) + "=`" + j[var].get<std::string>() + "` ";
      }
    CliRun r = gpumap({"__probe", "--cuda-lib", GPUMAP_BUILD_DIR "/sim/libcuda.so.1"}, env);
    ASSERT_EQ(r.code, 0) << label << r.err;
    CudaProbe p = parse_probe(r.out);
    std::string want_error = j["error"].is_null() ? "" : j["error"].get<std::string>();
    want_error = want_error.substr(0, want_error.find('('));
    EXPECT_EQ(p.error, want_error) << label;
    std::vector<std::string> got;
    for (const CudaDevice& d : p.devices) got.push_back(d.uuid);
    EXPECT_EQ(got, j["uuids"].get<std::vector<std::string>>()) << label;
    ++checked;
  }
  EXPECT_GE(checked, 100);
}

}  // namespace
}  // namespace gpumap::testing
