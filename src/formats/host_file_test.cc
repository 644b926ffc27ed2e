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

TEST(HostFile, ContainerObject) {
  const std::string gpus = R"("gpus": [
    {"name": "A", "uuid": "GPU-00000000-0000-0000-0000-000000000000", "pci_bus_id": "00000000:01:00.0", "minor_number": 4},
    {"name": "A", "uuid": "GPU-11111111-1111-1111-1111-111111111111", "pci_bus_id": "00000000:02:00.0", "minor_number": 5}])";
  SimHost bare = parse_host_file("{" + gpus + "}", "bare.json");
  EXPECT_FALSE(bare.container.has_value());
  // Privileged: every node and a cgroup that allows every device, unless said otherwise.
  SimHost p = parse_host_file("{\"container\": {\"privileged\": true}, " + gpus + "}", "p.json");
  ASSERT_TRUE(p.container.has_value());
  EXPECT_EQ(p.container->privileged, true);
  EXPECT_EQ(p.container->dev_nodes, (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(p.container->cgroup, DeviceCgroup::kV1);
  EXPECT_EQ(p.container->device_rules, std::vector<std::string>{"a *:* rwm"});
  EXPECT_FALSE(p.container->given.has_value());
  // Given one GPU (by index or UUID): only its node, unless dev_nodes says more (a hostPath /dev).
  SimHost g = parse_host_file("{\"container\": {\"given\": [1], \"device_cgroup\": \"v2\"}, " + gpus + "}", "g.json");
  EXPECT_EQ(g.container->given, std::vector<std::string>{"1"});
  EXPECT_EQ(g.container->given_by, "the container's allocation");
  EXPECT_EQ(g.container->dev_nodes, std::vector<uint32_t>{5});
  EXPECT_EQ(g.container->cgroup, DeviceCgroup::kV2);
  SimHost h = parse_host_file(
      "{\"container\": {\"given\": [\"GPU-00000000-0000-0000-0000-000000000000\"], \"dev_nodes\": [4, 5], "
      "\"device_cgroup\": [\"c 195:4 rw\"], \"given_by\": \"the kubelet's allocation\"}, " + gpus + "}",
      "h.json");
  EXPECT_EQ(h.container->dev_nodes, (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(h.container->device_rules, std::vector<std::string>{"c 195:4 rw"});
  EXPECT_EQ(h.container->given_by, "the kubelet's allocation");
  SimHost k = parse_host_file("{\"kubelet\": {\"socket\": \"s\", \"pods\": []}, " + gpus + "}", "k.json");
  EXPECT_NE(k.kubelet.find("\"pods\""), std::string::npos);
  EXPECT_TRUE(bare.kubelet.empty());
  // Errors name the file and the field.
  for (const auto& [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"{\"container\": {\"given\": [7]}, " + gpus + "}", "container.given: `7` is no GPU of this host"},
           {"{\"container\": {\"privilegd\": true}, " + gpus + "}", "unknown key `privilegd`"},
           {"{\"container\": {\"device_cgroup\": \"v3\"}, " + gpus + "}", "container.device_cgroup must be"},
           {"{\"container\": [], " + gpus + "}", "container must be an object"},
           {"{\"kubelet\": [], " + gpus + "}", "kubelet must be an object"}}) {
    try {
      parse_host_file(text, "bad.json");
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.json: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpumap
