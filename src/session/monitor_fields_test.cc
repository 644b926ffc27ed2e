// Issue 31 item 4 in process: the fields a monitor needs (temperature, power, clocks, fan, pstate,
// ECC, per-process utilisation, the global rank), read through the simulated driver and rendered
// as `list --query-gpu`, `ps --query`, JSON and metrics render them.
#include <gtest/gtest.h>

#include "fake_session.h"
#include "session/list.h"
#include "session/ps.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

FakeSession busy_host(std::vector<std::string> host_extra_missing = {}) {
  FakeSession f("h200x2");
  f.with_process(0, FakeProcess{.pid = 4101, .environ = std::vector<std::string>{"RANK=5", "SLURM_PROCID=1"}})
      .with_process(0, FakeProcess{.pid = 4102, .environ = std::vector<std::string>{"OMPI_COMM_WORLD_RANK=3"}})
      .with_process(1, FakeProcess{.pid = 4103, .environ = std::vector<std::string>{"SLURM_PROCID=7"}});
  f.host()["gpus"][0]["processes"][0]["sm_utilization"] = 87;
  f.host()["gpus"][0]["processes"][0]["memory_utilization"] = 40;
  if (!host_extra_missing.empty()) f.host()["missing_symbols"] = host_extra_missing;
  return f;
}

TEST(MonitorFields, TheOlderUtilisationCallAnswersWhereTheNewerIsAbsent) {
  FakeSession f = busy_host({"nvmlDeviceGetProcessesUtilizationInfo"});
  PsFrame frame = read_ps_frame(f.session());
  const Snapshot& s = f.session().snapshot();
  auto has = [&](const char* sym) { return std::find(s.bindings.begin(), s.bindings.end(), sym) != s.bindings.end(); };
  EXPECT_FALSE(has("nvmlDeviceGetProcessesUtilizationInfo"));
  EXPECT_TRUE(has("nvmlDeviceGetProcessUtilization"));
  ASSERT_EQ(frame.result.rows.size(), 3u);
  EXPECT_EQ(frame.result.rows[0].sm_utilization, 87u);
  EXPECT_EQ(frame.result.rows[1].sm_utilization, 0u);
}

TEST(MonitorFields, ARefusedNewerCallFallsBackAndTwoFailuresAreANote) {
  FakeSession f = busy_host();
  f.host()["faults"] = {{{"call", "nvmlDeviceGetProcessesUtilizationInfo"}, {"error", "NVML_ERROR_NOT_SUPPORTED"}}};
  EXPECT_EQ(read_ps_frame(f.session()).result.rows[0].memory_utilization, 40u);
  FakeSession g = busy_host();
  g.host()["faults"] = {{{"call", "nvmlDeviceGetProcessesUtilizationInfo"}, {"gpu", 0}, {"error", "NVML_ERROR_UNKNOWN"}}};
  PsFrame frame = read_ps_frame(g.session());
  EXPECT_FALSE(frame.result.rows[0].sm_utilization);
  bool noted = false;
  for (const GpuNote& n : g.session().snapshot().gpus[0].notes)
    noted |= n.call == "nvmlDeviceGetProcessesUtilizationInfo" && n.code == 999;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gpumap
