#include "formats/host_file.h"

#include <fstream>

#include <gtest/gtest.h>

namespace gpumap {
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

TEST(HostFile, DeeplyNestedFileIsRefusedBeforeParsing) {
  std::string p = write("deep.json", "{\"gpus\": [], \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  try {
    load_host_file(p);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: is not a gpumap host file (nested 100001 levels deep (at most 64))"),
              std::string::npos)
        << e.what();
  }
}

TEST(HostFile, SortsGpusIntoPciOrderAndChecksTheDefaultOrder) {
  std::string p = write("order.json", R"({"gpus": [
    {"name": "B", "uuid": "GPU-bbbbbbbb-0000-0000-0000-000000000000", "pci_bus_id": "0000:81:00.0"},
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"}],
    "cuda_default_order": ["GPU-bbbbbbbb-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000000"]})");
  SimHost h = load_host_file(p);
  EXPECT_EQ(h.gpus[0].name, "A");
  EXPECT_EQ(h.gpus[0].pci_bus_id, "00000000:01:00.0");
  std::string bad = write("bad-order.json", R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"}], "cuda_default_order": ["GPU-aaaaaaaa-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000000"]})");
  EXPECT_THROW(load_host_file(bad), std::runtime_error);
}

/// The message load_host_file throws for `text`, or "" when it accepts it.
std::string error_for(const std::string& name, const std::string& text) {
  try {
    load_host_file(write(name, text));
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(HostFile, PreciseErrorsForUuidsPciAndDirectories) {
  EXPECT_NE(error_for("short-uuid.json", R"({"gpus": [{"name": "A", "uuid": "GPU-aa", "pci_bus_id": "0000:01:00.0"}]})")
                .find("gpus[0].uuid `GPU-aa` is not \"GPU-\" and 32 hex digits"),
            std::string::npos);
  EXPECT_NE(error_for("bad-hex.json",
                      R"({"gpus": [{"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-00000000000g", "pci_bus_id": "0000:01:00.0"}]})")
                .find("32 hex digits"),
            std::string::npos);
  EXPECT_NE(error_for("no-pci.json", R"({"gpus": [{"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000"}]})")
                .find("gpus[0] needs \"pci_bus_id\""),
            std::string::npos);
  EXPECT_NE(error_for("bad-mig.json", R"({"gpus": [{"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000",
      "pci_bus_id": "0000:01:00.0", "mig_enabled": true, "mig_devices": [{"uuid": "MIG-1"}]}]})")
                .find("mig_devices[0].uuid `MIG-1` is not \"MIG-\" and 32 hex digits"),
            std::string::npos);
  try {
    load_host_file(::testing::TempDir());
    FAIL() << "a directory was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory, not a host file"), std::string::npos) << e.what();
  }
}

TEST(HostFile, MigDeviceNameDefaultsToTheGpusName) {
  SimHost h = load_host_file(write("mig-name.json", R"({"gpus": [{"name": "A100", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000",
      "pci_bus_id": "0000:01:00.0", "mig_enabled": true, "mig_devices": [
      {"uuid": "MIG-aaaaaaaa-0000-0000-0000-000000000001", "name": "A100 MIG 3g.40gb"},
      {"uuid": "MIG-aaaaaaaa-0000-0000-0000-000000000002"}]}]})"));
  EXPECT_EQ(h.gpus[0].mig_devices[0].name, "A100 MIG 3g.40gb");
  EXPECT_EQ(h.gpus[0].mig_devices[1].name, "A100 MIG");
}

TEST(HostFile, ParsesTextWithoutAFileAndNamesThePathGiven) {
  SimHost h = parse_host_file(R"({"hostname": "n1", "faults": [{"call": "nvmlInit", "error": "NVML_ERROR_UNKNOWN"}],
    "gpus": [{"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0"}]})",
                              "inline.json");
  EXPECT_EQ(h.path, "inline.json");
  EXPECT_EQ(h.hostname, "n1");
  ASSERT_EQ(h.faults.size(), 1u);
  EXPECT_EQ(h.faults[0].error, 999);
  try {
    parse_host_file("{\"gpus\": [], \"memroy\": 1}", "typo.json");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("typo.json: the host has an unknown key `memroy`"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpumap
