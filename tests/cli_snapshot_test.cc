// Black-box tests of `gpumap snapshot save|diff` and `verify --snapshot`: a snapshot of a
// simulated host, then the same host changed (written as variant host files into a temp folder
// that is removed afterwards).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

// seed-mixed: GPU 0, 2, 3 are A100s, GPU 1 an H100 (CUDA's FASTEST_FIRST puts it first).
const std::string kGpu0 = "GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2";
const std::string kGpu1 = "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b";
const std::string kGpu2 = "GPU-35b0fad1-6758-b581-24f3-9f00d2606170";
const std::string kNew = "GPU-0badc0de-0000-4000-8000-000000000001";

class CliSnapshot : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("snapshot");
    file_ = dir_ + "/snap.json";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A copy of a bundled host, changed by `edit`, as a file in the test folder.
  std::string host(const std::string& name, const std::function<void(json&)>& edit = {}) {
    std::ifstream in(host_path(name));
    json h = json::parse(in);
    if (edit) edit(h);
    std::string p = dir_ + "/" + name + "-" + std::to_string(n_++) + ".json";
    std::ofstream(p) << h.dump(1);
    return p;
  }
  CliRun on(const std::string& host_file, std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.push_back("--simulate");
    args.push_back(host_file);
    std::vector<std::string> e = env;
    e.push_back("GPUMAP_STATE_DIR=" + dir_ + "/state");
    return gpumap_here(args, e);
  }
  // Saves seed-mixed (or `base`), then diffs against `changed`.
  CliRun changed(const std::function<void(json&)>& edit, const std::string& base = "seed-mixed", bool as_json = false) {
    CliRun s = on(host(base), {"snapshot", "save", file_});
    EXPECT_EQ(s.code, 0) << s.err;
    std::vector<std::string> args = {"snapshot", "diff", file_};
    if (as_json) args.push_back("--json");
    return on(host(base, edit), args);
  }
  std::string read(const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_, file_;
  int n_ = 0;
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(CliSnapshot, SameHostIsSameForDiffAndVerify) {
  std::string h = host("seed-mixed");
  CliRun s = on(h, {"snapshot", "save", file_});
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_TRUE(has(s.out, "Saved the numbering of 4 GPUs (driver 580.159.04) to " + file_)) << s.out;
  json f = json::parse(read(file_));
  EXPECT_EQ(f["format"], "gpumap-snapshot");
  EXPECT_EQ(f["version"], 1);
  EXPECT_EQ(f["gpus"][1]["uuid"], kGpu1);
  EXPECT_EQ(f["gpus"][1]["pci_bus_id"], "00000000:5D:00.0");
  EXPECT_EQ(f["gpus"][1]["minor_number"], 1);
  // FASTEST_FIRST on this mixed host comes from the (fake) driver; PCI_BUS_ID from NVML.
  EXPECT_EQ(f["cuda_order"]["FASTEST_FIRST"]["devices"][0], kGpu1);
  EXPECT_EQ(f["cuda_order"]["FASTEST_FIRST"]["source"], "driver");
  EXPECT_EQ(f["cuda_order"]["PCI_BUS_ID"]["devices"][0], kGpu0);
  EXPECT_EQ(f["cuda_order"]["PCI_BUS_ID"]["source"], "predicted");

  CliRun d = on(h, {"snapshot", "diff", file_});
  EXPECT_EQ(d.code, 0) << d.out << d.err;
  EXPECT_TRUE(has(d.out, "SAME: the GPU numbering matches the snapshot.")) << d.out;
  EXPECT_EQ(on(h, {"verify", "--snapshot", file_}).code, 0);
  CliRun j = on(h, {"snapshot", "diff", file_, "--json"});
  EXPECT_EQ(j.code, 0);
  json dj = json::parse(j.out);
  EXPECT_EQ(dj["same"], true);
  EXPECT_EQ(dj["changes"], json::array());
  EXPECT_EQ(dj["simulated"], true);
}

TEST_F(CliSnapshot, RebootAloneIsNoDifference) {
  ASSERT_EQ(on(host("seed-mixed", [](json& h) { h["boot_id"] = "boot-1"; }), {"snapshot", "save", file_}).code, 0);
  CliRun r = on(host("seed-mixed", [](json& h) { h["boot_id"] = "boot-2"; }), {"snapshot", "diff", file_});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "the host was rebooted since the snapshot")) << r.out;
}

void swap_slots(json& h) { std::swap(h["gpus"][0]["pci_bus_id"], h["gpus"][1]["pci_bus_id"]); }

TEST_F(CliSnapshot, GpusSwappedBetweenSlots) {
  CliRun r = changed(swap_slots);
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, kGpu0 + " moved from index 0 to 1 and from slot 00000000:3B:00.0 to 00000000:5D:00.0")) << r.out;
  EXPECT_TRUE(has(r.out, kGpu1 + " moved from index 1 to 0")) << r.out;
  EXPECT_TRUE(has(r.out, "CUDA's PCI_BUS_ID order changed")) << r.out;
  EXPECT_FALSE(has(r.out, "FASTEST_FIRST order changed")) << r.out;  // the H100 is still first
  CliRun v = on(host("seed-mixed", swap_slots), {"verify", "--snapshot", file_});
  EXPECT_EQ(v.code, 4);
  EXPECT_TRUE(has(v.out, "CHANGED: ")) << v.out;
}

TEST_F(CliSnapshot, OneGpuRemoved) {
  CliRun r = changed([](json& h) {
    h["gpus"].erase(1);
    h.erase("cuda_default_order");
  });
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "a GPU is missing: nvidia-smi GPU 1 " + kGpu1)) << r.out;
  EXPECT_TRUE(has(r.out, kGpu2 + " moved from index 2 to 1 (same slot 00000000:AF:00.0)")) << r.out;
}

TEST_F(CliSnapshot, OneBoardReplaced) {
  CliRun r = changed([](json& h) {
    h["gpus"][2]["uuid"] = kNew;
    h["cuda_default_order"][2] = kNew;
  });
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "nvidia-smi GPU 2 is now " + kNew + " (was " + kGpu2 +
                             "): the board in slot 00000000:AF:00.0 was replaced"))
      << r.out;
  EXPECT_FALSE(has(r.out, "missing")) << r.out;
  EXPECT_FALSE(has(r.out, "order changed")) << r.out;
}

TEST_F(CliSnapshot, DriverUpdated) {
  CliRun r = changed([](json& h) { h["driver_version"] = "580.200.01"; }, "seed-mixed", true);
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["same"], false);
  ASSERT_EQ(j["changes"].size(), 1u) << r.out;
  EXPECT_EQ(j["changes"][0]["kind"], "driver_changed");
  EXPECT_EQ(j["changes"][0]["message"], "driver 580.159.04 → 580.200.01");
  EXPECT_FALSE(j["changes"][0]["breaks"].get<std::string>().empty());
}

TEST_F(CliSnapshot, MigTurnedOn) {
  CliRun r = changed(
      [](json& h) {
        h["gpus"][0]["mig_enabled"] = true;
        h["gpus"][0]["mig_devices"] = {{{"uuid", "MIG-0badc0de-0000-4000-8000-000000000002"},
                                        {"gpu_instance_id", 1},
                                        {"compute_instance_id", 0},
                                        {"memory_total_mib", 71000},
                                        {"multiprocessor_count", 66}}};
      },
      "h200x2");
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "MIG was turned on on nvidia-smi GPU 0 (GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab) (1 MIG devices)"))
      << r.out;
  EXPECT_FALSE(has(r.out, "order changed")) << r.out;  // the MIG device stands where its GPU stood
}

TEST_F(CliSnapshot, FastestFirstOrderChanged) {
  CliRun r = changed([](json& h) { std::swap(h["cuda_default_order"][1], h["cuda_default_order"][2]); });
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "CUDA's FASTEST_FIRST order changed: cuda:0.. was GPU-df9ecf4c, GPU-28554ffd, GPU-35b0fad1, "
                         "GPU-b9e1e9b0, now GPU-df9ecf4c, GPU-35b0fad1, GPU-28554ffd, GPU-b9e1e9b0"))
      << r.out;
  EXPECT_TRUE(has(r.out, "without CUDA_DEVICE_ORDER=PCI_BUS_ID")) << r.out;
}

// The round trip an admin makes: after a change, `save` records the new numbering and `diff` is
// quiet again.
TEST_F(CliSnapshot, SavingAgainAcceptsTheNewNumbering) {
  std::string v = host("seed-mixed", [](json& h) { h["gpus"].erase(3); h["cuda_default_order"].erase(3); });
  ASSERT_EQ(on(host("seed-mixed"), {"snapshot", "save", file_}).code, 0);
  CliRun d = on(v, {"snapshot", "diff", file_});
  ASSERT_EQ(d.code, 4);
  EXPECT_TRUE(has(d.out, "When the new numbering is intended, record it: gpumap snapshot save " + file_)) << d.out;
  ASSERT_EQ(on(v, {"snapshot", "save", file_}).code, 0);
  EXPECT_EQ(on(v, {"snapshot", "diff", file_}).code, 0);
}

TEST_F(CliSnapshot, DefaultFileIsPerSimulatedHostInTheStateFolder) {
  std::string h = host("h200x2");
  CliRun s = on(h, {"snapshot", "save"});
  ASSERT_EQ(s.code, 0) << s.err;
  std::string expected = dir_ + "/state/snapshot-simulated-h200x2-0.json";
  EXPECT_TRUE(has(s.out, expected)) << s.out;
  // The hint keeps --simulate: without it the diff would read this machine, not the simulated host (issue 43).
  EXPECT_TRUE(has(s.out, "Check it later with: gpumap snapshot diff --simulate " + h + "\n")) << s.out;
  EXPECT_TRUE(std::filesystem::exists(expected));
  EXPECT_EQ(on(h, {"snapshot", "diff"}).code, 0);
  EXPECT_EQ(on(h, {"verify", "--snapshot", expected}).code, 0);
}

TEST_F(CliSnapshot, MissingDamagedAndNewerSnapshotsExit2) {
  std::string h = host("h200x2");
  CliRun missing = on(h, {"snapshot", "diff", file_});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(has(missing.err, "no snapshot at " + file_)) << missing.err;
  EXPECT_TRUE(has(missing.err, "gpumap snapshot save " + file_)) << missing.err;
  EXPECT_EQ(on(h, {"verify", "--snapshot", file_}).code, 2);

  ASSERT_EQ(on(h, {"snapshot", "save", file_}).code, 0);
  std::string good = read(file_);
  std::ofstream(file_) << good.substr(0, good.size() / 2);
  CliRun cut = on(h, {"snapshot", "diff", file_});
  EXPECT_EQ(cut.code, 2);
  EXPECT_TRUE(has(cut.err, "is not valid JSON")) << cut.err;

  json j = json::parse(good);
  j["version"] = 7;
  std::ofstream(file_) << j.dump();
  CliRun newer = on(h, {"snapshot", "diff", file_});
  EXPECT_EQ(newer.code, 2);
  EXPECT_TRUE(has(newer.err, "format version 7, written by a newer gpumap")) << newer.err;
}

// '['*100000 + ']'*100000: snapshot save crashed (exit 139, a stack overflow copying the JSON).
TEST_F(CliSnapshot, DeeplyNestedFileIsNotASnapshot) {
  std::string h = host("h200x2");
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::ofstream(file_) << deep;
  CliRun save = on(h, {"snapshot", "save", file_});
  EXPECT_EQ(save.code, 2) << save.err;
  EXPECT_TRUE(has(save.err, file_ + " exists and is not a gpumap snapshot; not replacing it")) << save.err;
  EXPECT_EQ(read(file_), deep);
  for (std::vector<std::string> args : {std::vector<std::string>{"snapshot", "diff", file_},
                                        std::vector<std::string>{"verify", "--snapshot", file_}}) {
    CliRun r = on(h, args);
    EXPECT_EQ(r.code, 2) << args[0] << r.err;
    EXPECT_TRUE(has(r.err, "not a gpumap snapshot (nested 100000 levels deep (at most 64))")) << r.err;
  }
  CliRun sim = gpumap_here({"list", "--simulate", file_});
  EXPECT_EQ(sim.code, 2) << sim.err;
  EXPECT_TRUE(has(sim.err, "is not a gpumap host file (nested 100000 levels deep")) << sim.err;
}

TEST_F(CliSnapshot, SaveNeverReplacesAFileThatIsNotASnapshot) {
  std::string h = host("h200x2");
  std::ofstream(file_) << "[gres]\nName=gpu File=/dev/nvidia0\n";
  CliRun r = on(h, {"snapshot", "save", file_});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, file_ + " exists and is not a gpumap snapshot; not replacing it")) << r.err;
  EXPECT_EQ(read(file_), "[gres]\nName=gpu File=/dev/nvidia0\n");
  CliRun folder = on(h, {"snapshot", "save", dir_});
  EXPECT_EQ(folder.code, 2);
  EXPECT_TRUE(has(folder.err, "is a folder")) << folder.err;
}

// The advice for a file that is not a snapshot is advice that works: `snapshot save` of that file
// would be refused, so the hint names another path, and following it succeeds.
TEST_F(CliSnapshot, DiffOfAFileThatIsNotASnapshotNeverSuggestsSavingOverIt) {
  std::string h = host("h200x2");
  std::ofstream(file_) << "{\"name\": \"not a snapshot\"}\n";
  CliRun r = on(h, {"snapshot", "diff", file_});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(has(r.err, "snapshot save " + file_)) << r.err;
  EXPECT_TRUE(has(r.err, "never replaces such a file")) << r.err;
  EXPECT_EQ(on(h, {"snapshot", "save", file_}).code, 2);  // what the old hint said would have failed
  std::string other = dir_ + "/other.json";
  EXPECT_EQ(on(h, {"snapshot", "save", other}).code, 0);
  EXPECT_EQ(on(h, {"snapshot", "diff", other}).code, 0);
  // A damaged snapshot (the marker is there) may be saved over: that hint stays.
  std::ofstream(file_, std::ios::trunc) << "{\"format\": \"gpumap-snapshot\", \"version\": \"x\"}\n";
  CliRun damaged = on(h, {"snapshot", "diff", file_});
  EXPECT_TRUE(has(damaged.err, "gpumap snapshot save " + file_)) << damaged.err;
  EXPECT_EQ(on(h, {"snapshot", "save", file_}).code, 0);
}

// A write that fails (here the file size limit, as a full disk would) keeps the old snapshot.
TEST_F(CliSnapshot, FailedWriteKeepsTheOldSnapshot) {
  std::string h = host("seed-mixed");
  ASSERT_EQ(on(h, {"snapshot", "save", file_}).code, 0);
  std::string before = read(file_);
  ProcResult r = run_capture({"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 1; exec \"$0\" \"$@\"", GPUMAP_BINARY, "snapshot",
                              "save", file_, "--simulate", h},
                             {"PATH=/usr/bin:/bin", "HOME=" + dir_, "GPUMAP_CACHE_DIR=" + dir_ + "/cache"}, 60000);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "cannot write " + file_)) << r.err;
  EXPECT_EQ(read(file_), before);
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_FALSE(has(e.path().filename().string(), ".tmp.")) << e.path();
}

TEST_F(CliSnapshot, UsageErrors) {
  std::string h = host("h200x2");
  EXPECT_EQ(on(h, {"snapshot"}).code, 2);
  CliRun bad = on(h, {"snapshot", "load"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err, "unknown action `load`")) << bad.err;
  EXPECT_EQ(on(h, {"snapshot", "save", file_, "extra"}).code, 2);
  CliRun both = on(h, {"verify", "--snapshot", file_, "--expect", "0"});
  EXPECT_EQ(both.code, 2);
  EXPECT_TRUE(has(both.err, "--expect")) << both.err;
  EXPECT_TRUE(has(on(h, {"snapshot", "--help"}).out, "/var/lib/gpumap/snapshot.json"));
}

}  // namespace
}  // namespace gpumap::testing
