#include "formats/snapshot_file.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "resolve/snapshot_diff.h"  // the round trip compares with the diff

namespace gpumap {
namespace {

MappingSnapshot sample() {
  MappingSnapshot s;
  s.gpumap_version = "0.1.0";
  s.saved_at = "2026-11-30T03:04:05Z";
  s.hostname = "node7";
  s.boot_id = "9f0c7d1e-0000-4000-8000-000000000000";
  s.source = "NVML";
  s.driver_version = "580.159.04";
  s.cuda_driver_version = 13000;
  SnapshotGpu g;
  g.nvml_index = 0;
  g.minor_number = 0;
  g.uuid = "GPU-d7a6e045-6a6d-ea2f-480e-29591e1ae97e";
  g.pci_bus_id = "00000000:07:00.0";
  g.name = "NVIDIA A100-SXM4-80GB";
  g.mig_enabled = true;
  g.mig_devices = {{"MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd", 1, 0}, {"MIG-7a360cfe-db46-0c91-2ca2-81816070806d", 2, std::nullopt}};
  s.gpus = {g};
  s.cuda_orders = {{"FASTEST_FIRST", {g.mig_devices[0].uuid, g.mig_devices[1].uuid}, "driver", ""},
                   {"PCI_BUS_ID", {}, "", "the CUDA driver failed to list its devices"}};
  return s;
}

// Every field survives the file: a diff of the read-back copy against the original is empty and
// writing it again gives the same text.
TEST(SnapshotFile, RoundTrip) {
  MappingSnapshot s = sample();
  std::string text = dump(mapping_snapshot_json(s));
  MappingSnapshot back = parse_mapping_snapshot(text, "f.json");
  EXPECT_EQ(dump(mapping_snapshot_json(back)), text);
  EXPECT_TRUE(diff_mapping_snapshots(s, back).changes.empty());
  EXPECT_EQ(back.cuda_orders[1].error, "the CUDA driver failed to list its devices");
  EXPECT_EQ(back.gpus[0].mig_devices[1].compute_instance_id, std::nullopt);
  Json j = Json::parse(text);
  EXPECT_EQ(j["format"], "gpumap-snapshot");
  EXPECT_EQ(j["version"], 1);
  EXPECT_TRUE(looks_like_mapping_snapshot(text));
}

std::string error_of(const std::string& text) {
  try {
    parse_mapping_snapshot(text, "/x/snap.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  return "(no error)";
}

TEST(SnapshotFile, DamagedForeignAndNewerFilesAreRefusedNamingTheFileAndField) {
  std::string good = dump(mapping_snapshot_json(sample()));
  EXPECT_EQ(error_of(good.substr(0, good.size() / 2)), "snapshot /x/snap.json: is not valid JSON (damaged or cut short)");
  EXPECT_NE(error_of("{\"gpus\": []}").find("is not a gpumap snapshot"), std::string::npos);
  EXPECT_FALSE(looks_like_mapping_snapshot("{\"gpus\": []}"));
  EXPECT_FALSE(looks_like_mapping_snapshot("not json"));

  Json j = Json::parse(good);
  j["version"] = 2;
  EXPECT_NE(error_of(j.dump()).find("format version 2, written by a newer gpumap"), std::string::npos);
  EXPECT_TRUE(looks_like_mapping_snapshot(j.dump()));  // a newer snapshot may still be replaced by save

  j = Json::parse(good);
  j["gpus"][0]["uuid"] = 5;
  EXPECT_EQ(error_of(j.dump()), "snapshot /x/snap.json: \"gpus[0].uuid\" must be a string");
  j = Json::parse(good);
  j["gpus"][0]["mig_devices"][1].erase("uuid");
  EXPECT_EQ(error_of(j.dump()), "snapshot /x/snap.json: \"gpus[0].mig_devices[1].uuid\" is missing");
  j = Json::parse(good);
  j["gpus"][0]["nvml_index"] = -1;
  EXPECT_NE(error_of(j.dump()).find("nvml_index"), std::string::npos);
  j = Json::parse(good);
  j["cuda_order"]["FASTEST_FIRST"]["devices"] = {1, 2};
  EXPECT_NE(error_of(j.dump()).find("cuda_order.FASTEST_FIRST.devices"), std::string::npos);
  j = Json::parse(good);
  j["version"] = "1";
  EXPECT_NE(error_of(j.dump()).find("\"version\""), std::string::npos);
}

}  // namespace
}  // namespace gpumap
