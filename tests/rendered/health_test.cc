// `gpumap health` as an operation and its rendering, in process (moved from src/session/ with its
// render assertions: session/ tests test answers, issue 57; tests/layers_test.cc).
// `gpumap health` on its answer: a simulated host's kernel log and fault counters, tied to the
// fixture /proc's processes as `ps` reads them.
#include "session/health.h"

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_session.h"
#include "model/error.h"
#include "output/health_view.h"
#include "session/diagnose.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

// The measured H100 line (formats/kernel_log_test.cc) on h200x2's GPU 0 (PCI 00:06), 60 s before
// the host's uptime.
const char* kXid31 =
    "4,1123,100000000,-;NVRM: Xid (PCI:0000:00:06): 31, pid=4001, name=python3, channel 0x0000000a, intr 00000000. "
    "MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_8 faulted @ 0x0_00000000. Fault is of type FAULT_PDE "
    "ACCESS_TYPE_VIRT_WRITE";

/// h200x2 with a faulting rank (4001: Slurm job 77 rank 1, cuda:0) and a bystander (4002) on GPU 0.
FakeSession faulted_host(std::vector<std::string> log, double uptime = 160) {
  FakeSession f("h200x2");
  f.host()["kernel_log"] = log;
  f.host()["uptime_s"] = uptime;
  f.with_process(0, {.pid = 4001,
                     .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0", "SLURM_JOB_ID=77", "SLURM_PROCID=1",
                                                         "RANK=1", "LOCAL_RANK=0"},
                     .uid = 0});
  f.with_process(0, {.pid = 4002, .argv = {"python3", "bystander.py"}, .environ = std::vector<std::string>{}, .uid = 0});
  return f;
}

TEST(Health, AnXidIsTiedToThePidTheKernelNamesWithItsJobRankAndCudaOrdinalNotTheBystander) {
  FakeSession f = faulted_host({"6,1120,99000000,-;NVRM: GPU at PCI:0000:00:06: GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab",
                                kXid31});
  HealthAnswer a = read_health(f.session(), {});
  EXPECT_TRUE(a.kernel_log.readable);
  EXPECT_EQ(a.kernel_log.xids, 1u);
  ASSERT_EQ(a.faults.size(), 1u);
  const HealthFault& x = a.faults[0];
  EXPECT_EQ(x.kind, "xid");
  EXPECT_EQ(x.nvml_index, 0u);
  EXPECT_EQ(x.uuid, "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab");
  ASSERT_TRUE(x.xid);
  EXPECT_EQ(x.xid->xid, 31u);
  EXPECT_EQ(x.xid->cause, XidCause::kApplication);
  EXPECT_EQ(x.severity, Severity::kWarning);
  ASSERT_TRUE(x.age_s);
  EXPECT_DOUBLE_EQ(*x.age_s, 60.0);
  ASSERT_EQ(x.processes.size(), 1u) << "the bystander 4002 is not blamed";
  const FaultProcess& p = x.processes[0];
  EXPECT_EQ(p.pid, 4001u);
  EXPECT_TRUE(p.named_by_kernel);
  EXPECT_EQ(p.kernel_name, "python3");
  EXPECT_EQ(p.row.state, ProcessState::kRunning);
  EXPECT_EQ(p.row.slurm_job_id, "77");
  EXPECT_EQ(p.row.slurm_procid, "1");
  EXPECT_EQ(p.row.global_rank, "1");
  EXPECT_EQ(p.row.cuda_ordinal, 0);
  EXPECT_EQ(a.worst, Severity::kWarning);
  EXPECT_EQ(a.gpus[0].xids_since_boot, 1u);
  EXPECT_EQ(a.gpus[1].xids_since_boot, 0u);
  std::string words = fault_process_words(p);
  EXPECT_NE(words.find("Slurm job 77 rank 1"), std::string::npos) << words;
  EXPECT_NE(words.find("cuda:0"), std::string::npos) << words;
  // The JSON says the same.
  nlohmann::json j = nlohmann::json::parse(health_json(a));
  EXPECT_EQ(j["faults"][0]["xid"], 31);
  EXPECT_EQ(j["faults"][0]["processes"][0]["pid"], 4001);
  EXPECT_EQ(j["faults"][0]["processes"][0]["slurm_job_id"], "77");
  EXPECT_EQ(j["faults"][0]["processes"][0]["cuda_ordinal"], 0);
  EXPECT_EQ(j["faults"][0]["cause"], "application");
}

TEST(Health, APidThatHasExitedSaysSoWithTheNameTheKernelGave) {
  FakeSession f = faulted_host({"4,9,150000000,-;NVRM: Xid (PCI:0000:00:07): 13, pid=4999, name=trainer, Graphics Exception"});
  HealthAnswer a = read_health(f.session(), {});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].nvml_index, 1u);
  ASSERT_EQ(a.faults[0].processes.size(), 1u);
  const FaultProcess& p = a.faults[0].processes[0];
  EXPECT_EQ(p.pid, 4999u);
  EXPECT_EQ(p.row.state, ProcessState::kExited);
  EXPECT_EQ(fault_process_words(p), "pid 4999 (exited; the kernel named it trainer)");
}

TEST(Health, AnXidWithoutAPidIsTiedToTheProcessesOnItsGpu) {
  FakeSession f = faulted_host(
      {"4,9,150000000,-;NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."});
  HealthAnswer a = read_health(f.session(), {});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].severity, Severity::kError);
  ASSERT_EQ(a.faults[0].processes.size(), 2u);
  EXPECT_FALSE(a.faults[0].processes[0].named_by_kernel);
  EXPECT_EQ(a.faults[0].processes[0].pid + a.faults[0].processes[1].pid, 4001u + 4002u);
}

TEST(Health, SinceKeepsOnlyTheWindowsXids) {
  FakeSession f = faulted_host({kXid31});  // 60 s before uptime
  HealthRequest in_window{parse_since("2m")};
  EXPECT_EQ(read_health(f.session(), in_window).faults.size(), 1u);
  HealthRequest before{parse_since("30s")};
  HealthAnswer a = read_health(f.session(), before);
  EXPECT_TRUE(a.faults.empty());
  EXPECT_EQ(a.gpus[0].xids_since_boot, 1u);
  EXPECT_EQ(a.gpus[0].xids_in_window, 0u);
  EXPECT_EQ(a.worst, Severity::kInfo);
  for (const char* bad : {"", "x", "10y", "-5", "1e99", "5 m"}) EXPECT_EQ(testing::code_of([&] { parse_since(bad); }), kExitUsage) << bad;
  EXPECT_DOUBLE_EQ(parse_since("90"), 90);
  EXPECT_DOUBLE_EQ(parse_since("1d"), 86400);
}

TEST(Health, CountersGiveFaultsTiedToTheGpusProcesses) {
  FakeSession f = faulted_host({});
  nlohmann::json& g = f.host()["gpus"][0];
  g["ecc_uncorrected_volatile"] = 2;
  g["ecc_corrected_volatile"] = 7;
  g["ecc_uncorrected_aggregate"] = 5;
  g["remapped_rows_correctable"] = 1;
  g["remapped_rows_uncorrectable"] = 2;
  g["remapped_rows_pending"] = true;
  g["clock_event_reasons"] = {"gpu_idle", "hw_slowdown"};
  g["pcie_replay_count"] = 3;
  g["retired_pages_dbe"] = 4;
  f.host()["gpus"][1].erase("ecc_uncorrected_volatile");
  HealthAnswer a = read_health(f.session(), {});
  const GpuFaultCounters& c = a.gpus[0].counters;
  EXPECT_EQ(c.ecc_uncorrected_volatile, 2u);
  EXPECT_EQ(c.ecc_corrected_volatile, 7u);
  EXPECT_EQ(c.ecc_uncorrected_aggregate, 5u);
  EXPECT_FALSE(c.ecc_corrected_aggregate) << "not in the file: NOT_SUPPORTED";
  EXPECT_EQ(c.remapped_rows_uncorrectable, 2u);
  EXPECT_EQ(c.remapped_rows_pending, true);
  EXPECT_EQ(c.remapped_rows_failed, false);
  EXPECT_EQ(c.clock_event_reasons, kClockEventGpuIdle | kClockEventHwSlowdown);
  EXPECT_EQ(c.pcie_replay_count, 3u);
  EXPECT_EQ(c.retired_pages_dbe, 4u);
  EXPECT_FALSE(c.retired_pages_sbe);
  EXPECT_FALSE(a.gpus[1].counters.ecc_uncorrected_volatile) << "GPU 1 has no uncorrectable count in the file";
  std::vector<std::string> kinds;
  for (const HealthFault& x : a.faults) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"ecc-uncorrectable", "remap-pending", "clock-slowdown"}));
  EXPECT_EQ(a.faults[0].severity, Severity::kError);
  EXPECT_EQ(a.faults[0].processes.size(), 2u);
  EXPECT_EQ(a.worst, Severity::kError);
}

TEST(Health, ALostGpuIsAnError) {
  FakeSession f = faulted_host({});
  f.host()["faults"] = {{{"call", "nvmlDeviceGetTotalEccErrors"}, {"gpu", 1}, {"error", "NVML_ERROR_GPU_IS_LOST"}}};
  HealthAnswer a = read_health(f.session(), {});
  EXPECT_TRUE(a.gpus[1].counters.lost);
  EXPECT_FALSE(a.gpus[0].counters.lost);
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, "gpu-lost");
  EXPECT_EQ(a.faults[0].nvml_index, 1u);
  EXPECT_EQ(a.worst, Severity::kError);
}

// doctor's gpu-faulted: only for the GPUs this environment's CUDA view names, only for faults of
// the card (an application's Xid 31 is the program's, not the GPU's).
TEST(Health, DoctorSaysWhenTheEnvironmentsGpuHasFaulted) {
  auto ids = [](const DoctorAnswer& a) {
    std::vector<std::string> out;
    for (const Finding& f : a.findings) out.push_back(f.id);
    return out;
  };
  FakeSession on1("h200x2", {"CUDA_VISIBLE_DEVICES=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  on1.host()["gpus"][1]["ecc_uncorrected_volatile"] = 3;
  on1.host()["gpus"][1]["clock_event_reasons"] = {"hw_power_brake_slowdown"};
  on1.host()["kernel_log"] = {kXid31};  // on GPU 0: a program's fault
  DoctorAnswer a = doctor(on1.session(), on1.session().env(), false, false);
  std::vector<std::string> ia = ids(a);
  ASSERT_EQ(std::count(ia.begin(), ia.end(), "gpu-faulted"), 1) << ::testing::PrintToString(ia);
  const Finding& f = *std::find_if(a.findings.begin(), a.findings.end(), [](const Finding& x) { return x.id == "gpu-faulted"; });
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_NE(f.message.find("cuda:0 here is nvidia-smi GPU 1, which has faulted: nvidia-smi GPU 1: 3 uncorrectable ECC"),
            std::string::npos) << f.message;
  EXPECT_NE(f.message.find("hw_power_brake_slowdown"), std::string::npos) << f.message;
  EXPECT_EQ(f.fix, "");
  // The same host from GPU 0: only the program's Xid 31 there, which is not the card's.
  Session zero = on1.other({"CUDA_VISIBLE_DEVICES=0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  DoctorAnswer b = doctor(zero, zero.env(), false, false);
  std::vector<std::string> ib = ids(b);
  EXPECT_EQ(std::count(ib.begin(), ib.end(), "gpu-faulted"), 0) << ::testing::PrintToString(ib);
}

}  // namespace
}  // namespace gpumap
