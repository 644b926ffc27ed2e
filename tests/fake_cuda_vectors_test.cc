// The fake libcuda (src/fake/fake_cuda.cc, written apart from the resolver) must reproduce
// every vector measured on the real driver (every tests/vectors/*.jsonl), through the same dlopen
// path gpumap uses.
#include <csignal>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "driver/cuda_probe.h"
#include "vector_file.h"

namespace gpumap::testing {
namespace {

// The host a vector file was measured on, for the fake: its GPUs as the baseline line lists them.
// The measured hosts have identical GPUs, so the default order is PCI order, and the fake's file
// lists them in that order.  The 2 x H200 file has its host file (tests/hosts/measured-h200x2).
std::string host_for(const std::string& file, const std::vector<DriverVector>& vectors) {
  if (file.find("/h200x2-driver-580.159.04.jsonl") != std::string::npos) return host_path("measured-h200x2");
  nlohmann::json gpus = nlohmann::json::array();
  for (size_t i = 0; i < vectors[0].uuids.size(); ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02zx:00.0", i + 1);
    gpus.push_back({{"name", "NVIDIA H200"}, {"uuid", vectors[0].uuids[i]}, {"pci_bus_id", bus},
                    {"compute_capability", "9.0"}, {"multiprocessor_count", 132}, {"memory_total_mib", 143771}});
  }
  return write_temp_file("vector-host.json", nlohmann::json({{"gpus", gpus}}).dump());
}

TEST(FakeCudaVectors, EveryMeasuredVectorThroughTheFakeLibrary) {
  int checked = 0;
  for (const std::string& file : vector_files(GPUMAP_SOURCE_DIR)) {
    std::vector<DriverVector> vectors = load_vectors(file);
    ASSERT_FALSE(vectors.empty()) << file;
    std::string host = host_for(file, vectors);
    for (const DriverVector& v : vectors) {
      std::vector<std::string> env = {"GPUMAP_FAKE_HOST=" + host};
      if (v.cvd) env.push_back("CUDA_VISIBLE_DEVICES=" + *v.cvd);
      if (v.cdo) env.push_back("CUDA_DEVICE_ORDER=" + *v.cdo);
      CliRun r = gpumap({"__probe", "--cuda-lib", GPUMAP_BUILD_DIR "/sim/libcuda.so.1"}, env);
      ++checked;
      if (v.error == "DRIVER_CRASH") {  // the real cuInit crashed the process: so must the fake
        EXPECT_EQ(r.code, 128 + SIGSEGV) << file << ": " << v.label();
        continue;
      }
      ASSERT_EQ(r.code, 0) << file << ": " << v.label() << r.err;
      CudaProbe p = parse_probe(r.out);
      EXPECT_EQ(p.error, v.error) << file << ": " << v.label();
      std::vector<std::string> got;
      for (const CudaDevice& d : p.devices) got.push_back(d.uuid);
      EXPECT_EQ(got, v.uuids) << file << ": " << v.label();
    }
  }
  EXPECT_GE(checked, 268);  // every line of tests/vectors/*.jsonl
}

}  // namespace
}  // namespace gpumap::testing
