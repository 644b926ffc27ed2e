// `gpumap health` as a program: the plumbing (flags, exit codes, text) on a simulated host whose
// kernel log and counters hold faults (tests/hosts/xid-faults.json); the answer itself is tested
// in process (session/health_test.cc) and its JSON against docs/cli.md (CliJsonContract).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

TEST(CliHealth, FaultsWithTheirProcessesAndExitSevenOnAnError) {
  CliRun r = gpumap({"health", "--simulate", host_path("xid-faults")}, {"GPUMAP_IN_CONTAINER=0"});
  EXPECT_EQ(r.code, 7) << r.err;  // Xid 79 and the uncorrectable ECC are errors
  EXPECT_NE(r.out.find("warning: Xid 31 on nvidia-smi GPU 0: GPU memory page fault"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hit: pid 4179 (exited; the kernel named it python3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error: Xid 79 on nvidia-smi GPU 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error: nvidia-smi GPU 1: 1 uncorrectable ECC errors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on the GPU: pid 4242"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(60 s ago)"), std::string::npos) << r.out;
}

TEST(CliHealth, SinceFailOnAndAHealthyHost) {
  CliRun in_window = gpumap({"health", "--json", "--since", "30s", "--simulate", host_path("xid-faults")});
  nlohmann::json j = nlohmann::json::parse(in_window.out);
  ASSERT_EQ(j["faults"].size(), 4u) << in_window.out;  // Xid 79 (10 s ago) and GPU 1's three counter faults
  EXPECT_EQ(j["faults"][0]["xid"], 79);
  EXPECT_EQ(j["gpus"][0]["xids_since_boot"], 1);
  EXPECT_EQ(j["gpus"][0]["xids_in_window"], 0);
  EXPECT_EQ(j["since_s"], 30.0);
  EXPECT_EQ(in_window.code, 7);
  CliRun bad = gpumap({"health", "--since", "soon", "--simulate", "h200x2"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--since soon is not a duration"), std::string::npos) << bad.err;
  CliRun healthy = gpumap({"health", "--simulate", "h200x2"});
  EXPECT_EQ(healthy.code, 0) << healthy.err;
  EXPECT_NE(healthy.out.find("No fault since boot."), std::string::npos) << healthy.out;
  // A warning alone exits 0, or 7 with --fail-on warning.
  std::string host = write_temp_file("health-warning.json", R"({"uptime_s": 100, "kernel_log": [
      "4,1,90000000,-;NVRM: Xid (PCI:0000:00:06): 31, pid=77, name=python3, channel 0x0000000a"],
      "gpus": [{"name": "NVIDIA H100", "uuid": "GPU-c0000000-0000-4000-8000-000000000000",
                "pci_bus_id": "00000000:00:06.0"}]})");
  EXPECT_EQ(gpumap({"health", "--simulate", host}).code, 0);
  EXPECT_EQ(gpumap({"health", "--simulate", host, "--fail-on", "warning"}).code, 7);
}

}  // namespace
}  // namespace gpumap::testing
