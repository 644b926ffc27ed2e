// read_metrics_frame in process: what `metrics` and `serve` expose, on FakeSession hosts.
#include "session/metrics.h"

#include <gtest/gtest.h>

#include "fake_session.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const ProcessRow* row(const MetricsFrame& m, uint32_t pid) {
  for (const ProcessRow& r : m.ps.result.rows)
    if (r.pid == pid) return &r;
  return nullptr;
}

TEST(ReadMetricsFrame, ProcessesWithTheirOwnCudaNumberEveryLeaseAndTheHostsTraps) {
  FakeSession f("seed-mixed");  // mixed models: CUDA's default order differs from nvidia-smi's
  f.with_process(0, {.pid = 101, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1"}}, 1000);
  f.with_process(0, {.pid = 103, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0"}}, 1000);
  f.with_process(2, {.pid = 102, .environ = std::vector<std::string>{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=2"}});
  Session& s = f.session();
  MetricsFrame m = read_metrics_frame(s.driver(), s.seams());
  EXPECT_TRUE(m.cuda_known) << m.cuda_error;
  ASSERT_TRUE(row(m, 101) && row(m, 102) && row(m, 103));  // beside the host's own process
  EXPECT_EQ(row(m, 101)->cuda_ordinal, 0);  // FASTEST_FIRST: its "1" is nvidia-smi GPU 0
  EXPECT_FALSE(row(m, 103)->cuda_ordinal);  // its "0" is the H100, nvidia-smi 1: GPU 0 is outside its set
  EXPECT_EQ(row(m, 102)->cuda_ordinal, 0);
  EXPECT_EQ(m.ps.leases.size(), m.snapshot.gpus.size());  // every GPU's lease
  bool order = false;
  for (const Finding& fd : m.host_findings) order |= fd.id == "order-differs";
  EXPECT_TRUE(order);
  Exposition e;
  add_frame_metrics(e, metrics_input(m));
  EXPECT_NE(e.text().find("gpumap_process_info{"), std::string::npos) << e.text();
  EXPECT_NE(e.text().find("cuda_ordinal=\"0\""), std::string::npos) << e.text();
  EXPECT_NE(e.text().find("order-differs"), std::string::npos) << e.text();
}

TEST(ReadMetricsFrame, WithoutCudaThatTheOrderNeedsTheFrameSaysSoAndKeepsNvml) {
  FakeSession f("seed-mixed");
  f.with_process(0, {.pid = 101});
  Session& s = f.session();
  MetricsFrame m = read_metrics_frame(s.driver(), s.seams(), {.ask_cuda = false});
  EXPECT_FALSE(m.cuda_known);
  EXPECT_FALSE(m.cuda_error.empty());
  EXPECT_EQ(m.snapshot.gpus.size(), 4u);
  ASSERT_TRUE(row(m, 101));
  EXPECT_FALSE(row(m, 101)->cuda_ordinal);  // not guessed
}

TEST(ReadMetricsFrame, ADriverThatFailsThrowsForTheExporterToMarkStale) {
  FakeSession f("h200x2");
  f.host()["errors"] = {{"nvmlInit", "NVML_ERROR_UNKNOWN"}};
  Session& s = f.session();
  EXPECT_THROW(read_metrics_frame(s.driver(), s.seams()), Error);
}

}  // namespace
}  // namespace gpumap
