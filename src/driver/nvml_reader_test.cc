#include "driver/nvml_reader.h"

#include <dirent.h>
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <algorithm>

#include <gtest/gtest.h>

#include "driver/nvml_api.h"
#include "model/error.h"

namespace gpumap {
namespace {

const std::string kSim = std::string(GPUMAP_BUILD_DIR) + "/sim/libnvidia-ml.so.1";
const std::string kSimLegacy = std::string(GPUMAP_BUILD_DIR) + "/sim-legacy/libnvidia-ml.so.1";

/// A host file under the test's temporary folder.
std::string write_host(const std::string& name, const std::string& text) {
  std::string dir = ::testing::TempDir() + "/gpumap-nvml-reader";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

/// A bundled host with `extra` ("key": value, ...) added to its top level.
std::string bundled_with(const std::string& host, const std::string& name, const std::string& extra) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/hosts/" + host + ".json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.insert(text.find('{') + 1, extra + ",");
  return write_host(name, text);
}

Snapshot read_simulated(const std::string& host, const std::string& library = kSim) {
  DriverSource src;
  src.nvml_library = library;
  src.simulated = true;
  src.host_file = host;
  src.driver_timeout_s = 0;
  return read_snapshot(src, ReadOptions{});
}

size_t thread_count() {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory() ? 1 : 0;
  return n;
}

// Each bounded read against a hung driver left its reader thread (and its workers) behind: 41
// threads after 20 devices() calls from the library.  One reader thread now serves every read;
// while it hangs, later reads wait for it until their own deadline and fail the same way.
TEST(NvmlReader, AHungDriverHoldsOneReaderThreadAcrossCalls) {
  std::string dir = ::testing::TempDir() + "/gpumap-nvml-hang";
  std::filesystem::create_directories(dir);
  std::string host = dir + "/hang.json";
  {
    std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/hosts/h200x2.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(text.find('{') + 1, R"("faults": [{"call": "nvmlInit", "hang": true}],)");
    std::ofstream(host) << text;
  }
  DriverSource src;
  src.nvml_library = std::string(GPUMAP_BUILD_DIR) + "/sim/libnvidia-ml.so.1";
  src.simulated = true;
  src.host_file = host;
  src.driver_timeout_s = 0.2;
  size_t before = thread_count();
  for (int i = 0; i < 6; ++i) {
    try {
      read_snapshot(src, ReadOptions{});
      ADD_FAILURE() << "a hung nvmlInit answered";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitNoDriver);
      EXPECT_NE(std::string(e.what()).find("did not answer within 0.2 s"), std::string::npos) << e.what();
    }
  }
  EXPECT_LE(thread_count(), before + 1) << "one reader thread, reused, not one per call";
  std::filesystem::remove_all(dir);
}

// Through NVSwitches every GPU reaches every other: stored as fabric membership (O(GPUs)),
// not as a peer entry per pair (O(GPUs^2): 7.6 GB for 8 192 GPUs); the pairs are derived.
TEST(NvmlReader, SwitchPeersAreAFabricNotPairs) {
  DriverSource src;
  src.nvml_library = std::string(GPUMAP_BUILD_DIR) + "/sim/libnvidia-ml.so.1";
  src.simulated = true;
  src.host_file = std::string(GPUMAP_SOURCE_DIR) + "/hosts/dgx8.json";
  src.driver_timeout_s = 0;
  ReadOptions opt;
  opt.nvlink = true;
  Snapshot s = read_snapshot(src, opt);
  ASSERT_EQ(s.gpus.size(), 8u);
  for (const Gpu& g : s.gpus) {
    EXPECT_TRUE(g.nvlink_peers.empty()) << "GPU " << g.nvml_index << " lists switch peers pair by pair";
    ASSERT_TRUE(g.nvswitch_fabric) << g.nvml_index;
    EXPECT_EQ(*g.nvswitch_fabric, 0u);
    std::vector<NvLinkPeer> peers = nvlink_peers_of(s, g);
    ASSERT_EQ(peers.size(), 7u);
    for (const NvLinkPeer& p : peers) EXPECT_EQ(p.links, 18u);
  }
  EXPECT_EQ(nvlinks_between(s.gpus[0], s.gpus[7]), 18u);
  EXPECT_EQ(nvlinks_between(s.gpus[3], s.gpus[3]), 0u);
}

// A failed query is noted with the call and the driver's raw return code beside the words, so a
// caller can tell GPU_IS_LOST from NO_PERMISSION without reading text.
TEST(NvmlReader, ANoteKeepsTheCallAndItsRawCode) {
  std::string host = write_host("codes.json", R"({"gpus": [
    {"name": "A", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000", "pci_bus_id": "0000:01:00.0", "memory_total_mib": 10,
     "errors": {"nvmlDeviceGetMemoryInfo": "NVML_ERROR_UNKNOWN", "nvmlDeviceGetUtilizationRates": "NVML_ERROR_NOT_SUPPORTED",
                "nvmlDeviceGetMigMode": "NVML_ERROR_NO_PERMISSION", "nvmlDeviceGetCudaComputeCapability": 42}}]})");
  Snapshot s = read_simulated(host);
  ASSERT_EQ(s.gpus.size(), 1u);
  const Gpu& g = s.gpus[0];
  EXPECT_FALSE(g.utilization_gpu) << "NOT_SUPPORTED is N/A";
  ASSERT_EQ(g.notes.size(), 3u) << "NOT_SUPPORTED is a plain N/A, not a note";
  EXPECT_EQ(g.notes[0].call, "nvmlDeviceGetMemoryInfo");
  EXPECT_EQ(g.notes[0].code, NVML_ERROR_UNKNOWN);
  EXPECT_EQ(g.notes[0].text, kSim + ": nvmlDeviceGetMemoryInfo returned NVML_ERROR_UNKNOWN (999): NVML_ERROR_UNKNOWN");
  EXPECT_EQ(g.notes[1].call, "nvmlDeviceGetCudaComputeCapability");
  EXPECT_EQ(g.notes[1].code, 42) << "a code gpumap has no name for is kept as it came";
  EXPECT_NE(g.notes[1].text.find("NVML_ERROR_(unlisted) (42)"), std::string::npos) << g.notes[1].text;
  EXPECT_EQ(g.notes[2].call, "nvmlDeviceGetMigMode");
  EXPECT_EQ(g.notes[2].code, NVML_ERROR_NO_PERMISSION);
}

// An answer gpumap refuses (a count past its limits) is noted with the code the call returned.
TEST(NvmlReader, ARefusedAnswerKeepsItsCodeToo) {
  std::string host = bundled_with("h200x2", "huge.json",
                                  R"("faults": [{"call": "nvmlDeviceGetComputeRunningProcesses", "gpu": 1, "output": "huge_count"}])");
  Snapshot s = read_simulated(host);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_TRUE(s.gpus[0].notes.empty());
  ASSERT_EQ(s.gpus[1].notes.size(), 1u);
  const GpuNote& n = s.gpus[1].notes[0];
  EXPECT_EQ(n.call, "nvmlDeviceGetComputeRunningProcesses");
  EXPECT_EQ(n.code, NVML_ERROR_INSUFFICIENT_SIZE) << "the size query's answer, with the absurd count";
  EXPECT_NE(n.text.find("claimed 4294967280 processes"), std::string::npos) << n.text;
  EXPECT_FALSE(s.gpus[1].processes) << "unknown, not idle";
}

// A process that just got busy: the driver's last period says 99 %, the average over its whole
// sample buffer 30 % (what a reader asking with lastSeenTimeStamp 0 gets: 29, 41, 56 % a second apart
// on an H100 while nvidia-smi pmon said 99 %).  gpumap asks for the last second, through both calls.
TEST(NvmlReader, PerProcessUtilisationIsTheLastSecondNotTheWholeBuffer) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/hosts/h200x2.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = text.find("\"uuid\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, R"("processes": [{"pid": 4242, "used_memory_mib": 1024, "sm_utilization": 99, "memory_utilization": 9,
                  "sm_utilization_buffer": 30, "memory_utilization_buffer": 3}], )");
  std::string host = write_host("busy.json", text);
  for (const std::string& lib : {kSim, kSimLegacy}) {  // the newer call, and the older one alone
    DriverSource src;
    src.nvml_library = lib;
    src.simulated = true;
    src.host_file = host;
    src.driver_timeout_s = 0;
    ReadOptions opt;
    opt.process_utilization = true;
    Snapshot s = read_snapshot(src, opt);
    ASSERT_TRUE(s.gpus.at(0).processes) << lib;
    ASSERT_EQ(s.gpus[0].processes->size(), 1u) << lib;
    EXPECT_EQ((*s.gpus[0].processes)[0].sm_utilization, 99u) << lib;
    EXPECT_EQ((*s.gpus[0].processes)[0].memory_utilization, 9u) << lib;
  }
}

// Every symbol of GPUMAP_NVML_CALLS, newest version first: the simulated driver defines each (it
// is compiled against the same prototypes), and the bound symbols come out in the list's order.
TEST(NvmlReader, TheFakeLibraryExportsEveryListedSymbol) {
  void* h = dlopen(kSim.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  std::vector<const char*> names;
#define GPUMAP_NVML_NAME_LIST_(member, need, ret, params, ...) names.insert(names.end(), {GPUMAP_NVML_NAMES(__VA_ARGS__)});
  GPUMAP_NVML_CALLS(GPUMAP_NVML_NAME_LIST_)
#undef GPUMAP_NVML_NAME_LIST_
  EXPECT_EQ(names.size(), 54u);
  for (const char* n : names) EXPECT_NE(dlsym(h, n), nullptr) << n;
}

TEST(NvmlReader, BindsNewestFirstAndFallsBackInOrder) {
  std::string host = std::string(GPUMAP_SOURCE_DIR) + "/hosts/h200x2.json";
  // The monitor calls (all optional, one version each) come last in every list.
  const std::vector<std::string> monitor = {
      "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetPowerManagementLimit",
      "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetClockInfo", "nvmlDeviceGetFanSpeed",
      "nvmlDeviceGetPerformanceState", "nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetProcessesUtilizationInfo",
      "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetRemappedRows",
      "nvmlDeviceGetRetiredPages", "nvmlDeviceGetRetiredPagesPendingStatus", "nvmlDeviceGetPcieReplayCounter"};
  const auto with_monitor = [&](std::vector<std::string> v, const std::string& absent = "") {
    for (const std::string& m : monitor)
      if (m != absent) v.push_back(m);
    return v;
  };
  // An older driver's name for the clock events (R535 renamed "throttle" to "event").
  const auto older_clock_name = [](std::vector<std::string> v) {
    std::replace(v.begin(), v.end(), std::string("nvmlDeviceGetCurrentClocksEventReasons"),
                 std::string("nvmlDeviceGetCurrentClocksThrottleReasons"));
    return v;
  };
  const std::vector<std::string> newest = {
      "nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlSystemGetDriverVersion",
      "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName",
      "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetMinorNumber", "nvmlDeviceGetMemoryInfo_v2",
      "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetCudaComputeCapability",
      "nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetMigDeviceHandleByIndex",
      "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId", "nvmlDeviceGetComputeRunningProcesses_v3",
      "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetCpuAffinity", "nvmlDeviceGetNvLinkState",
      "nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemoteDeviceType", "nvmlDeviceGetP2PStatus"};
  EXPECT_EQ(read_simulated(host).bindings, with_monitor(newest));
  // An older driver: the unversioned names (this fake lacks nvmlDeviceGetNvLinkRemoteDeviceType and
  // nvmlDeviceGetProcessesUtilizationInfo too: per-process utilisation falls back to the older call).
  const std::vector<std::string> legacy = {
      "nvmlInit", "nvmlShutdown", "nvmlErrorString", "nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion",
      "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
      "nvmlDeviceGetPciInfo", "nvmlDeviceGetMinorNumber", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetUtilizationRates",
      "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount",
      "nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId",
      "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetCpuAffinity",
      "nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetP2PStatus"};
  Snapshot old = read_simulated(host, kSimLegacy);
  EXPECT_EQ(old.bindings, older_clock_name(with_monitor(legacy, "nvmlDeviceGetProcessesUtilizationInfo")));
  ASSERT_EQ(old.gpus.size(), 2u);
  EXPECT_TRUE(old.gpus[0].processes) << "the unversioned process lists are read";
  // Symbols missing one by one: the next version binds, an optional call without one is absent.
  std::string missing = bundled_with("h200x2", "missing.json", R"("missing_symbols": ["nvmlDeviceGetPciInfo_v3",
      "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3",
      "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetMinorNumber"])");
  const std::vector<std::string> fallbacks = {
      "nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlSystemGetDriverVersion",
      "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName",
      "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetUtilizationRates",
      "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount",
      "nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId",
      "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetCpuAffinity",
      "nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemoteDeviceType",
      "nvmlDeviceGetP2PStatus"};
  Snapshot some = read_simulated(missing);
  EXPECT_EQ(some.bindings, with_monitor(fallbacks));
  ASSERT_EQ(some.gpus.size(), 2u);
  EXPECT_FALSE(some.gpus[0].minor_number) << "an optional call without a symbol is N/A";
  EXPECT_TRUE(some.gpus[0].processes);
  // A required call without any of its symbols refuses the library, naming what it tried.
  std::string no_pci = bundled_with("h200x2", "no-pci.json", R"("missing_symbols": ["nvmlDeviceGetPciInfo_v3",
      "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"])");
  try {
    read_simulated(no_pci);
    ADD_FAILURE() << "bound without nvmlDeviceGetPciInfo";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitNoDriver);
    EXPECT_NE(std::string(e.what()).find(
                  "required symbol missing (tried nvmlDeviceGetPciInfo_v3, nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpumap
