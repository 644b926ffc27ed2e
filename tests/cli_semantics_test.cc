// Black-box tests of `gpumap explain`, `which`, `verify` and `doctor` on simulated hosts.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

// seed-mixed: nvidia-smi GPU 1 is the newer model, so FASTEST_FIRST gives cuda:0 = GPU 1, cuda:1 = GPU 0.
const std::string kGpu0 = "GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2";
const std::string kGpu1 = "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b";
const std::string kGpu2 = "GPU-35b0fad1-6758-b581-24f3-9f00d2606170";

CliRun run(std::vector<std::string> args, const std::vector<std::string>& env = {}, const std::string& host = "seed-mixed") {
  args.push_back("--simulate");
  args.push_back(host);
  return gpumap_here(args, env);
}

bool has_finding(const json& j, const std::string& id) {
  for (auto& f : j["findings"])
    if (f["id"] == id) return true;
  return false;
}

TEST(CliWhich, UuidAndPciOrderIndexFormsAndCurrentOrdinals) {
  CliRun r = run({"which", "--json", "2", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["uuid_form"]["CUDA_VISIBLE_DEVICES"], kGpu2 + "," + kGpu0);
  EXPECT_EQ(j["index_form"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
  EXPECT_EQ(j["index_form"]["CUDA_VISIBLE_DEVICES"], "2,0");
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["cuda_ordinal"], 0);  // what it will be
  EXPECT_EQ(j["devices"][0]["nvml_index"], 2);
  EXPECT_EQ(j["devices"][1]["nvml_index"], 0);
  // Now (the current environment): FASTEST_FIRST puts GPU 1 first, so GPU 2 is cuda:2, GPU 0 cuda:1.
  EXPECT_EQ(j["cuda"]["devices"][2]["uuid"], kGpu2);
  EXPECT_EQ(j["cuda"]["devices"][1]["uuid"], kGpu0);
}

TEST(CliWhich, AcceptsPciAndPrefixAndSaysNotVisible) {
  CliRun r = run({"which", "af:00.0", "GPU-28554FFD"}, {"CUDA_VISIBLE_DEVICES=" + kGpu1});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("export CUDA_VISIBLE_DEVICES=" + kGpu2 + "," + kGpu0), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not visible"), std::string::npos) << r.out;
}

TEST(CliWhich, BadOrAmbiguousGpuExits2NamingIt) {
  CliRun bad = run({"which", "9"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("`9`"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(kGpu0), std::string::npos) << bad.err;  // lists the GPUs
  CliRun amb = run({"which", "GPU-"});
  EXPECT_EQ(amb.code, 2);
  EXPECT_NE(amb.err.find("ambiguous"), std::string::npos) << amb.err;
}

TEST(CliWhich, MigGpuIsNamedByItsMigDevices) {
  CliRun r = run({"which", "--json", "0"}, {}, "mig");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["uuid_form"]["CUDA_VISIBLE_DEVICES"].get<std::string>().rfind("MIG-", 0), 0u) << r.out;
  EXPECT_EQ(j["index_form"], nullptr);
}

TEST(CliVerify, ExactMatchExits0) {
  EXPECT_EQ(run({"verify", "--expect", "1,0,2,3"}).code, 0);
  EXPECT_EQ(run({"verify", "--expect", "0,1,2,3"}, {"CUDA_DEVICE_ORDER=PCI_BUS_ID"}).code, 0);
  EXPECT_EQ(run({"verify", "--expect", "2"}, {"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=2"}).code, 0);
}

TEST(CliVerify, MismatchExits4WithTheDifference) {
  CliRun r = run({"verify", "--expect", "0,1,2,3"});
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.out.find("cuda:0 is nvidia-smi GPU 1"), std::string::npos) << r.out;
  // More visible than expected: a mismatch unless --prefix.
  EXPECT_EQ(run({"verify", "--expect", "1"}).code, 4);
  EXPECT_EQ(run({"verify", "--expect", "1", "--prefix"}).code, 0);
  CliRun j = run({"verify", "--json", "--expect", "0"});
  EXPECT_EQ(j.code, 4);
  EXPECT_FALSE(json::parse(j.out)["ok"].get<bool>());
}

TEST(CliVerify, CudaWouldFailExits5AndBadGpuExits2) {
  EXPECT_EQ(run({"verify", "--expect", "0"}, {"CUDA_DEVICE_ORDER=pci_bus_id"}).code, 5);
  EXPECT_EQ(run({"verify", "--expect", "0"}, {"CUDA_VISIBLE_DEVICES=0,0"}).code, 5);
  EXPECT_EQ(run({"verify", "--expect", "7"}).code, 2);
  EXPECT_EQ(run({"verify"}).code, 2);
}

TEST(CliVerify, MeasuredHostFile) {
  EXPECT_EQ(run({"verify", "--expect", "1,0"}, {"CUDA_VISIBLE_DEVICES=1,0"}, host_path("measured-h200x2")).code, 0);
  EXPECT_EQ(run({"verify", "--expect", "0,1"}, {"CUDA_VISIBLE_DEVICES=1,0"}, host_path("measured-h200x2")).code, 4);
}

TEST(CliDoctor, CleanExits0ErrorsExit7) {
  CliRun ok = run({"doctor", "--json"}, {"CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_TRUE(json::parse(ok.out)["ok"].get<bool>());
  // A warning alone (order-differs) is not an error.
  CliRun warn = run({"doctor", "--json"});
  EXPECT_EQ(warn.code, 0);
  EXPECT_TRUE(has_finding(json::parse(warn.out), "order-differs"));
  CliRun bad = run({"doctor", "--json", "--env", "CUDA_VISIBLE_DEVICES=gpu-28554ffd"});
  EXPECT_EQ(bad.code, 7);
  json j = json::parse(bad.out);
  EXPECT_TRUE(has_finding(j, "uuid-prefix-case")) << bad.out;
  EXPECT_GE(j["counts"]["error"].get<int>(), 1);
  EXPECT_EQ(run({"doctor"}, {"CUDA_VISIBLE_DEVICES=0,0"}).code, 7);
}

TEST(CliDoctor, OtherHosts) {
  EXPECT_EQ(run({"doctor"}, {}, "dgx8").code, 0);
  EXPECT_EQ(run({"doctor"}, {"LOCAL_WORLD_SIZE=8", "CUDA_VISIBLE_DEVICES=0,1"}, "dgx8").code, 7);
  CliRun mig = run({"doctor", "--json"}, {}, "mig");
  EXPECT_TRUE(has_finding(json::parse(mig.out), "mig-enabled")) << mig.out;
}

TEST(CliExplain, SaysWhereTheListIsCut) {
  CliRun r = run({"explain", "--env", "CUDA_VISIBLE_DEVICES=" + kGpu1 + ",GPU-dead," + kGpu0});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("entry 2 `GPU-dead`"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA drops it and every entry after it, so cuda:1 does not exist"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cuda:0 = nvidia-smi GPU 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("list-cut-short"), std::string::npos) << r.out;
}

TEST(CliExplain, JsonHasEntriesMappingAndFindings) {
  CliRun r = run({"explain", "--json"}, {"CUDA_VISIBLE_DEVICES=1,0", "NVIDIA_VISIBLE_DEVICES=all", "LOCAL_RANK=1", "GPUMAP_IN_CONTAINER=0"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][0]["outcome"], "visible");
  EXPECT_EQ(j["cuda"]["devices"].size(), 2u);
  EXPECT_TRUE(has_finding(j, "visible-devices-without-pci-order")) << r.out;
  EXPECT_TRUE(has_finding(j, "nvidia-visible-devices-outside-container")) << r.out;
  std::string all = j["explanation"].dump();
  EXPECT_NE(all.find("NVIDIA_VISIBLE_DEVICES"), std::string::npos);
  EXPECT_NE(all.find("LOCAL_RANK=1"), std::string::npos);
}

TEST(CliExplain, InvalidOrderSaysCuInitFails) {
  CliRun r = run({"explain"}, {"CUDA_DEVICE_ORDER=PCI"});
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("cuInit fails"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpumap::testing
