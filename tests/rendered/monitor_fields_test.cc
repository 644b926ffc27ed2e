// The renderings (output/) of `monitor_fields` answers, in process: the tests of
// src/session/monitor_fields_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// Issue 31 item 4 in process: the fields a monitor needs (temperature, power, clocks, fan, pstate,
// ECC, per-process utilisation, the global rank), read through the simulated driver and rendered
// as `list --query-gpu`, `ps --query`, JSON and metrics render them.
#include <gtest/gtest.h>

#include "fake_session.h"
#include "output/list_view.h"
#include "output/metrics_text.h"
#include "output/ps_view.h"
#include "output/query_csv.h"
#include "session/list.h"
#include "session/ps.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

TEST(MonitorFields, ListCsvHasNvidiaSmiNamesUnitsAndNA) {
  FakeSession f("h200x2");
  ListAnswer a = answer_list(f.session(), {});
  std::vector<std::string> fields =
      parse_query_fields(QueryKind::kGpu,
                         "index," + std::string("temperature.gpu,power.draw,"
                                                "power.limit,enforced.power.limit,clocks.sm,clocks.mem,fan.speed,"
                                                "pstate,ecc.errors.corrected.volatile.total,"
                                                "ecc.errors.uncorrected.volatile.total"),
                         "--query-gpu");
  EXPECT_EQ(
      list_csv(a, fields, {}),
      "index, temperature.gpu, power.draw [W], power.limit [W], enforced.power.limit [W], clocks.current.sm [MHz], "
      "clocks.current.memory [MHz], fan.speed [%], pstate, ecc.errors.corrected.volatile.total, "
      "ecc.errors.uncorrected.volatile.total\n"
      "0, 30, 76.40 W, 700.00 W, 700.00 W, 345 MHz, 3201 MHz, [N/A], P0, 0, 0\n"
      "1, 32, 74.90 W, 700.00 W, 700.00 W, 345 MHz, 3201 MHz, [N/A], P0, 0, 0\n");
  EXPECT_EQ(list_csv(a, fields, {.header = false, .units = false}),
            "0, 30, 76.40, 700.00, 700.00, 345, 3201, [N/A], P0, 0, 0\n1, 32, 74.90, 700.00, 700.00, 345, 3201, [N/A], "
            "P0, 0, 0\n");
  for (const Gpu& g : a.snapshot->gpus) EXPECT_TRUE(g.notes.empty());  // NOT_SUPPORTED (the fan) is no note
  Json j = list_json(a);
  EXPECT_EQ(j["gpus"][0]["temperature_c"], 30);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["power_draw_w"].get<double>(), 76.4);
  EXPECT_TRUE(j["gpus"][0]["fan_speed_percent"].is_null());
  EXPECT_EQ(j["gpus"][1]["pstate"], "P0");
}

TEST(MonitorFields, AnOldHostFileIsNotSupportedEverywhereAndAFailureIsANoteWithItsCode) {
  FakeSession f("h200x2");
  for (auto& g : f.host()["gpus"])
    for (const char* k : {"temperature_gpu_c", "power_draw_w", "power_limit_w", "clock_sm_mhz", "clock_memory_mhz",
                          "pstate", "ecc_corrected_volatile", "ecc_uncorrected_volatile"})
      g.erase(k);
  f.host()["gpus"][1]["errors"] = {{"nvmlDeviceGetTemperature", "NVML_ERROR_GPU_IS_LOST"}};
  ListAnswer a = answer_list(f.session(), {});
  EXPECT_EQ(list_csv(a, {"temperature.gpu", "power.draw", "pstate"}, {.header = false}),
            "[N/A], [N/A], [N/A]\n[N/A], [N/A], [N/A]\n");
  EXPECT_TRUE(a.snapshot->gpus[0].notes.empty());
  ASSERT_EQ(a.snapshot->gpus[1].notes.size(), 1u);
  EXPECT_EQ(a.snapshot->gpus[1].notes[0].call, "nvmlDeviceGetTemperature");
  EXPECT_EQ(a.snapshot->gpus[1].notes[0].code, 15);
}

TEST(MonitorFields, SensorsAreNotReadWhereNotAsked) {
  FakeSession f("h200x2");
  const Snapshot& s = f.session().snapshot();  // what map, which, pick read
  EXPECT_FALSE(s.sensors_read);
  EXPECT_FALSE(s.gpus[0].temperature_c);
  EXPECT_FALSE(list_json(ListAnswer{.snapshot = &s}).at("gpus")[0].contains("temperature_c"));
}

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

TEST(MonitorFields, PerProcessUtilisationAndGlobalRankInPsCsvAndJson) {
  FakeSession f = busy_host();
  PsFrame frame = read_ps_frame(f.session());
  const Snapshot& s = f.session().snapshot();
  EXPECT_EQ(render_process_csv(s, frame.result, frame.leases,
                               parse_query_fields(QueryKind::kProcess,
                                                  "pid,sm_utilization,utilization.memory,rank,slurm_procid", "--query"),
                               {}),
            "pid, utilization.sm [%], utilization.memory [%], rank, slurm_procid\n"
            "4101, 87 %, 40 %, 5, 1\n"      // RANK (torchrun inside srun) before SLURM_PROCID
            "4102, 0 %, 0 %, 3, [N/A]\n"    // no sample: no work in the last period
            "4103, [N/A], [N/A], 7, 7\n");  // GPU 1 says nothing of utilisation: not supported
  std::string j = ps_frame_json(s, frame, true);
  EXPECT_NE(j.find("\"sm_utilization\":87,\"memory_utilization\":40"), std::string::npos) << j;
  EXPECT_NE(j.find("\"global_rank\":\"5\",\"global_rank_variable\":\"RANK\""), std::string::npos) << j;
}

TEST(MonitorFields, MetricsSeriesWithUnits) {
  FakeSession f = busy_host();
  ReadOptions read = ps_read_options();
  read.sensors = true;
  f.session().snapshot(read);
  PsFrame frame = read_ps_frame(f.session());
  Exposition out;
  add_frame_metrics(out, {f.session().snapshot(), frame.result, frame.leases, {}});
  const std::string& t = out.text();
  for (const char* line : {"gpumap_gpu_temperature_celsius{uuid=\"GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\"} 30\n",
                           "gpumap_gpu_power_watts{uuid=\"GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\"} 76.4\n",
                           "gpumap_gpu_power_limit_watts{uuid=\"GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\"} 700\n",
                           "gpumap_gpu_sm_clock_hertz{uuid=\"GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab\"} 345000000\n",
                           "gpumap_process_sm_utilization_ratio{pid=\"4101\",type=\"compute\",uuid=\"GPU-ef612c2c-fb96-"
                           "14cb-ebbf-9b494cffceab\"} 0.87\n"})
    EXPECT_NE(t.find(line), std::string::npos) << line << t;
  EXPECT_EQ(t.find("gpumap_gpu_fan_speed_ratio{"), std::string::npos);  // not supported: no sample
  EXPECT_NE(t.find("rank=\"5\""), std::string::npos);
}

}  // namespace
}  // namespace gpumap
