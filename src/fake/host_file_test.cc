#include "fake/host_file.h"

#include <fstream>

#include <gtest/gtest.h>

namespace gpumap::fake {
namespace {

std::string write(const std::string& name, const std::string& text) {
  std::string p = ::testing::TempDir() + "/" + name;
  std::ofstream(p) << text;
  return p;
}

TEST(HostFile, HugeErrorCodeIsAnErrorNamingTheFileNotACrash) {
  // Found by fuzz_host_file: an all-digit error code overflowed std::stoi.
  std::string p = write("huge-code.json", R"({"errors": {"nvmlInit": "99999999999999999999"}, "gpus": []})");
  try {
    load_host_file(p);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("huge-code.json"), std::string::npos) << e.what();
  }
}

TEST(HostFile, SortsGpusIntoPciOrderAndChecksTheDefaultOrder) {
  std::string p = write("order.json", R"({"gpus": [
    {"name": "B", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000", "pci_bus_id": "0000:81:00.0"},
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"}],
    "cuda_default_order": ["GPU-bbbbbbbb-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000000"]})");
  FakeHost h = load_host_file(p);
  EXPECT_EQ(h.gpus[0].name, "A");
  EXPECT_EQ(h.gpus[0].pci_bus_id, "00000000:01:00.0");
  std::string bad = write("bad-order.json", R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"}], "cuda_default_order": ["GPU-aaaaaaaa-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000000"]})");
  EXPECT_THROW(load_host_file(bad), std::runtime_error);
}

}  // namespace
}  // namespace gpumap::fake
