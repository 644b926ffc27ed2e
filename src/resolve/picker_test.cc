#include "resolve/picker.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

Gpu gpu(uint32_t idx, const std::string& uuid, const std::string& bus, uint64_t used, std::string cpus) {
  Gpu g;
  g.nvml_index = idx;
  g.uuid = uuid;
  g.pci_bus_id = bus;
  g.pci = parse_pci_address(bus);
  g.name = "NVIDIA H100";
  g.memory_total_mib = 80000;
  g.memory_used_mib = used;
  g.utilization_gpu = 0;
  g.processes = std::vector<GpuProcess>{};
  g.cpu_affinity = std::move(cpus);
  return g;
}

void link(Gpu& a, Gpu& b, uint32_t n) {
  a.nvlink_peers.push_back({b.uuid, n, b.nvml_index});
  b.nvlink_peers.push_back({a.uuid, n, a.nvml_index});
}

/// Four GPUs: NVLink pairs 0-1 (CPUs 0-7) and 2-3 (CPUs 8-15).
Snapshot four() {
  Snapshot s;
  s.gpus = {gpu(0, "GPU-00", "00000000:18:00.0", 0, "0-7"), gpu(1, "GPU-11", "00000000:2A:00.0", 0, "0-7"),
            gpu(2, "GPU-22", "00000000:9A:00.0", 0, "8-15"), gpu(3, "GPU-33", "00000000:AB:00.0", 0, "8-15")};
  link(s.gpus[0], s.gpus[1], 4);
  link(s.gpus[2], s.gpus[3], 4);
  return s;
}

std::vector<std::string> all(const Snapshot& s) {
  std::vector<std::string> v;
  for (const Gpu& g : s.gpus) v.push_back(g.uuid);
  return v;
}

TEST(Picker, APeerWhoseIndexNamesAnotherGpuIsFoundByItsUuid) {
  // A snapshot put together by hand may carry a wrong nvml_index in a peer: the UUID decides.
  Snapshot s = four();
  for (Gpu& g : s.gpus) g.nvlink_peers.clear();
  s.gpus[0].nvlink_peers.push_back({"GPU-33", 6, 1});  // index 1 is GPU-11, not GPU-33
  s.gpus[3].nvlink_peers.push_back({"GPU-00", 6, 2});
  PickRequest req;
  req.count = 2;
  PickResult r = pick_gpus(s, all(s), {}, req);
  EXPECT_EQ(r.uuids, (std::vector<std::string>{"GPU-00", "GPU-33"}));
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0], "every pair joined by NVLink (6 links over 1 pair)");
}

TEST(Picker, OneGpuTakesTheMostFreeMemory) {
  Snapshot s = four();
  s.gpus[0].memory_used_mib = 5000;
  PickResult r = pick_gpus(s, all(s), {}, {});
  ASSERT_EQ(r.uuids, std::vector<std::string>{"GPU-11"});
}

TEST(Picker, NeverPicksALeasedGpuAndSaysWhoHoldsIt) {
  Snapshot s = four();
  PickRequest req;
  req.count = 4;
  PickResult r = pick_gpus(s, all(s), {{"GPU-22", "leased by pid 7 (bob)"}}, req);
  EXPECT_TRUE(r.uuids.empty());
  EXPECT_FALSE(r.impossible);  // a lease ends; waiting can help
  EXPECT_NE(r.failure.find("GPU 2 (GPU-22): leased by pid 7 (bob)"), std::string::npos) << r.failure;
  req.count = 1;
  for (int i = 0; i < 3; ++i) {
    PickResult one = pick_gpus(s, all(s), {{"GPU-00", "x"}, {"GPU-11", "x"}, {"GPU-33", "x"}}, req);
    EXPECT_EQ(one.uuids, std::vector<std::string>{"GPU-22"});
  }
}

TEST(Picker, PrefersAnNvlinkPairOnTheSameCpus) {
  Snapshot s = four();
  PickRequest req;
  req.count = 2;
  PickResult r = pick_gpus(s, all(s), {{"GPU-00", "leased"}}, req);
  EXPECT_EQ(r.uuids, (std::vector<std::string>{"GPU-22", "GPU-33"}));
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("NVLink"), std::string::npos);
}

TEST(Picker, WithoutNvlinkPrefersTheSameCpuAffinity) {
  Snapshot s = four();
  for (Gpu& g : s.gpus) g.nvlink_peers.clear();
  s.gpus[1].memory_used_mib = 70000;  // still qualifies: nothing asked about memory
  PickRequest req;
  req.count = 2;
  PickResult r = pick_gpus(s, all(s), {{"GPU-22", "leased"}}, req);
  EXPECT_EQ(r.uuids, (std::vector<std::string>{"GPU-00", "GPU-11"}));
}

TEST(Picker, MemoryUtilisationAndProcessLimits) {
  Snapshot s = four();
  s.gpus[0].memory_used_mib = 79000;
  s.gpus[1].utilization_gpu = 95;
  s.gpus[2].processes = std::vector<GpuProcess>{{123, 100, "compute"}};
  PickRequest req;
  req.count = 1;
  req.min_free_mib = 2000;
  req.max_util = 50;
  PickResult r = pick_gpus(s, all(s), {}, req);
  EXPECT_EQ(r.uuids, std::vector<std::string>{"GPU-33"});
  ASSERT_EQ(r.rejected.size(), 3u);
  EXPECT_EQ(r.rejected[0].reasons[0], "1000 MiB free, want 2000");
  EXPECT_NE(r.rejected[1].reasons[0].find("utilisation 95%"), std::string::npos);
  EXPECT_NE(r.rejected[2].reasons[0].find("pid 123"), std::string::npos);
  req.allow_busy = true;
  req.count = 2;
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, (std::vector<std::string>{"GPU-22", "GPU-33"}));
}

// Unknown is never free: an unreadable process list or (under max_util) utilisation
// disqualifies unless allowed, and an allowed unknown ranks after GPUs known to be idle.
TEST(Picker, UnknownProcessListOrUtilisationIsNotIdle) {
  Snapshot s = four();
  s.gpus[0].processes.reset();  // the most free memory, but NVML could not list its processes
  s.gpus[1].memory_used_mib = 100;
  s.gpus[1].utilization_gpu.reset();
  s.gpus[2].memory_used_mib = 200;
  s.gpus[3].memory_used_mib = 300;
  PickRequest req;
  req.count = 1;
  PickResult r = pick_gpus(s, all(s), {}, req);
  EXPECT_EQ(r.uuids, std::vector<std::string>{"GPU-11"});
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].uuid, "GPU-00");
  ASSERT_EQ(r.rejected[0].reasons.size(), 1u);
  EXPECT_EQ(r.rejected[0].reasons[0].rfind("process list unreadable", 0), 0u) << r.rejected[0].reasons[0];

  req.max_util = 10;
  r = pick_gpus(s, all(s), {}, req);
  EXPECT_EQ(r.uuids, std::vector<std::string>{"GPU-22"});
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[1].reasons[0].rfind("utilisation unreadable, want at most 10%", 0), 0u) << r.rejected[1].reasons[0];

  req.allow_unknown = true;  // allowed: taken, but after the GPUs known to be idle
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, std::vector<std::string>{"GPU-11"});
  req.max_util.reset();
  req.include = {"0"};
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, std::vector<std::string>{"GPU-00"});
  req.allow_unknown = false;
  EXPECT_TRUE(pick_gpus(s, all(s), {}, req).uuids.empty());
  req.allow_busy = true;  // sharing allowed: an unknown process list no longer matters
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, std::vector<std::string>{"GPU-00"});
}

// NVSwitch fabrics as the reader stores them (membership, no pair list): a pair on one fabric
// has the smaller switch link count, plus any direct links.
TEST(Picker, GpusOnOneSwitchFabricAreJoinedWithoutPairLists) {
  Snapshot s = four();
  for (Gpu& g : s.gpus) g.nvlink_peers.clear();
  for (size_t i = 0; i < 4; ++i) {
    s.gpus[i].nvswitch_links = 18;
    s.gpus[i].nvswitch_fabric = i < 2 ? 1 : 2;  // GPUs 0,1 on one fabric, 2,3 on another
  }
  s.gpus[0].memory_used_mib = 50000;  // 0 and 1 hold less free memory than 2 and 3
  s.gpus[1].memory_used_mib = 50000;
  PickRequest req;
  req.count = 2;
  PickResult r = pick_gpus(s, all(s), {}, req);
  EXPECT_EQ(r.uuids, (std::vector<std::string>{"GPU-22", "GPU-33"}));
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes.front(), "every pair joined by NVLink (18 links over 1 pair)");
  s.gpus[3].nvswitch_links = 12;  // the pair gets the smaller count: 0-1 (18) now wins
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, (std::vector<std::string>{"GPU-00", "GPU-11"}));
  EXPECT_EQ(nvlinks_between(s.gpus[2], s.gpus[3]), 12u);
  s.gpus[0].nvswitch_fabric = 2;  // 0 on 2,3's fabric, 1 alone on its own: 0-2 and 0-3 are pairs now
  EXPECT_EQ(nvlinks_between(s.gpus[0], s.gpus[1]), 0u);
  EXPECT_EQ(nvlinks_between(s.gpus[0], s.gpus[2]), 18u);
  s.gpus[0].nvswitch_fabric = 1;
  s.gpus[3].nvswitch_fabric.reset();  // off any fabric; a direct link joins it to 2
  link(s.gpus[2], s.gpus[3], 4);
  EXPECT_EQ(nvlinks_between(s.gpus[2], s.gpus[3]), 4u);
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, (std::vector<std::string>{"GPU-00", "GPU-11"})) << "18 links beat 4";
}

TEST(Picker, OnlyVisibleGpusAndIncludeExclude) {
  Snapshot s = four();
  PickRequest req;
  req.count = 2;
  PickResult r = pick_gpus(s, {"GPU-33", "GPU-00"}, {}, req);
  EXPECT_EQ(r.uuids, (std::vector<std::string>{"GPU-00", "GPU-33"}));
  req.count = 3;
  r = pick_gpus(s, {"GPU-33", "GPU-00"}, {}, req);
  EXPECT_TRUE(r.uuids.empty());
  EXPECT_TRUE(r.impossible);
  EXPECT_NE(r.failure.find("can see only 2"), std::string::npos) << r.failure;

  req.count = 1;
  req.include = {"3"};
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, std::vector<std::string>{"GPU-33"});
  req.include = {"00000000:9A:00.0"};
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, std::vector<std::string>{"GPU-22"});
  req.include = {"1"};
  EXPECT_THROW(pick_gpus(s, {"GPU-00"}, {}, req), Error);  // GPU 1 is hidden from this process
  req.include = {};
  req.exclude = {"0", "1", "2"};
  EXPECT_EQ(pick_gpus(s, all(s), {}, req).uuids, std::vector<std::string>{"GPU-33"});
  req.exclude = {"0", "1", "2", "3"};
  r = pick_gpus(s, all(s), {}, req);
  EXPECT_TRUE(r.impossible);
}

TEST(Picker, MigEnabledGpusAreNotWholeGpus) {
  Snapshot s = four();
  s.gpus[0].mig_enabled = true;
  PickRequest req;
  req.count = 4;
  PickResult r = pick_gpus(s, all(s), {}, req);
  EXPECT_TRUE(r.impossible);
  EXPECT_NE(r.failure.find("MIG mode is on"), std::string::npos);
}

TEST(Picker, CountBelowOneIsAUsageError) {
  Snapshot s = four();
  PickRequest req;
  req.count = 0;
  try {
    pick_gpus(s, all(s), {}, req);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

TEST(Picker, ManyGpusStillFindsTheConnectedGroup) {
  Snapshot s;
  for (uint32_t i = 0; i < 32; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", i + 1);
    s.gpus.push_back(gpu(i, "GPU-" + std::to_string(100 + i), bus, 0, i < 16 ? "0-7" : "8-15"));
  }
  for (uint32_t a = 20; a < 28; ++a)
    for (uint32_t b = a + 1; b < 28; ++b) link(s.gpus[a], s.gpus[b], 1);
  PickRequest req;
  req.count = 8;
  PickResult r = pick_gpus(s, all(s), {}, req);
  ASSERT_EQ(r.uuids.size(), 8u);
  EXPECT_EQ(r.uuids.front(), "GPU-120");
  EXPECT_EQ(r.uuids.back(), "GPU-127");
}

}  // namespace
}  // namespace gpumap
