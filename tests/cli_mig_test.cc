// MIG devices named everywhere (hosts/mig.json: nvidia-smi GPU 0 is in MIG mode with two
// 3g.40gb MIG devices, GPU 1 is a whole A100): map shows a MIG device's own name and memory;
// which, verify and pick/run --include accept MIG device UUIDs and unique prefixes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::json;

const std::string kParent = "GPU-d7a6e045-6a6d-ea2f-480e-29591e1ae97e";
const std::string kMig0 = "MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd";
const std::string kMig1 = "MIG-7a360cfe-db46-0c91-2ca2-81816070806d";
const std::string kGpu1 = "GPU-be21995e-9bde-3237-91d0-e984f1dd4d57";
const std::string kMigName = "NVIDIA A100-SXM4-80GB MIG 3g.40gb";

CliRun mig(std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin() + 1, {"--simulate", "mig"});
  return gpumap_here(args, env);
}

TEST(CliMig, MapShowsTheMigDevicesOwnNameAndMemory) {
  CliRun r = mig({"map", "--json", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  ASSERT_EQ(r.code, 0) << r.err;
  json d = json::parse(r.out)["cuda"]["devices"];
  ASSERT_EQ(d.size(), 3u) << r.out;
  EXPECT_EQ(d[0]["uuid"], kMig0);
  EXPECT_EQ(d[0]["name"], kMigName);
  EXPECT_EQ(d[0]["memory_total_mib"], 40192);  // not the parent's 81920
  EXPECT_EQ(d[0]["nvml_index"], 0);
  EXPECT_EQ(d[0]["mig"]["parent_uuid"], kParent);
  EXPECT_EQ(d[0]["mig"]["gpu_instance_id"], 1);
  EXPECT_EQ(d[2]["uuid"], kGpu1);
  EXPECT_EQ(d[2]["mig"], nullptr);
  CliRun t = mig({"map", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_NE(t.out.find(kMig0), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(kMigName), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("0 / 40192 MiB"), std::string::npos) << t.out;
  json l = json::parse(mig({"list", "--json"}).out);
  EXPECT_EQ(l["gpus"][0]["mig_devices"][1]["uuid"], kMig1);
  EXPECT_EQ(l["gpus"][0]["mig_devices"][1]["name"], kMigName);
  EXPECT_EQ(l["gpus"][0]["mig_devices"][1]["memory_total_mib"], 40192);
}

TEST(CliMig, WhichTakesMigUuidsAndPrefixesAndTheAdviceRoundTrips) {
  CliRun r = mig({"which", "--json", "MIG-7a360cfe", "MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  std::string form = j["uuid_form"]["CUDA_VISIBLE_DEVICES"];
  EXPECT_EQ(form, kMig1 + "," + kMig0);
  EXPECT_EQ(j["index_form"], nullptr);  // MIG devices have no index
  EXPECT_EQ(j["devices"][0]["name"], kMigName);
  EXPECT_NE(j["docker_run"].get<std::string>().find("device=" + kMig1 + "," + kMig0), std::string::npos);
  // Paste it: CUDA then shows exactly those, and verify agrees by the same names.
  json m = json::parse(mig({"map", "--json", "--env", "CUDA_VISIBLE_DEVICES=" + form}).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 2u) << m.dump();
  EXPECT_EQ(m["cuda"]["devices"][0]["uuid"], kMig1);
  EXPECT_EQ(m["cuda"]["devices"][1]["uuid"], kMig0);
  CliRun v = mig({"verify", "--expect", "MIG-7a360cfe,MIG-d280783e", "--env", "CUDA_VISIBLE_DEVICES=" + form});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  CliRun text = mig({"which", "MIG-7a36"});
  EXPECT_NE(text.out.find("export CUDA_VISIBLE_DEVICES=" + kMig1), std::string::npos) << text.out;
}

TEST(CliMig, VerifyExpectsMigDevices) {
  CliRun ok = mig({"verify", "--expect", "MIG-d280783e,MIG-7a360cfe,1", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  CliRun bad = mig({"verify", "--expect", "MIG-7a360cfe", "--prefix", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  EXPECT_EQ(bad.code, 4) << bad.out;
  EXPECT_NE(bad.out.find("MIG device"), std::string::npos) << bad.out;
  CliRun unknown = mig({"verify", "--expect", "MIG-ffff"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("names no MIG device"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find(kMig0), std::string::npos) << "the error lists the MIG devices\n" << unknown.err;
}

TEST(CliMig, PickAndRunIncludeMigDevices) {
  std::string locks = temp_dir("mig-locks");
  std::vector<std::string> env = {"GPUMAP_LOCK_DIR=" + locks};
  CliRun p = mig({"pick", "--include", "MIG-7a360cfe", "--format", "uuid"}, env);
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, kMig1 + "\n");
  CliRun idx = mig({"pick", "--include", "MIG-7a360cfe", "--format", "index"}, env);
  EXPECT_EQ(idx.code, 2);
  EXPECT_NE(idx.err.find("no index"), std::string::npos) << idx.err;
  CliRun ex = mig({"pick", "--include", "MIG-7a360cfe", "--exclude", "MIG-7a360cfe"}, env);
  EXPECT_EQ(ex.code, 6) << ex.err;
  CliRun r = mig({"run", "--include", "MIG-d280783e", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"}, env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kMig0 + "\n");
  EXPECT_NE(r.err.find(kMigName), std::string::npos) << r.err;
  // Without --include a MIG-mode GPU is still never picked as a whole.
  CliRun whole = mig({"pick", "--gpus", "2"}, env);
  EXPECT_EQ(whole.code, 6);
}

}  // namespace
}  // namespace gpumap::testing
