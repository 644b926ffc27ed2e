// The renderings (output/) of `metrics` answers, in process: the tests of
// src/session/metrics_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// read_metrics_frame in process: what `metrics` and `serve` expose, on FakeSession hosts.
#include "session/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "fake_session.h"
#include "output/metrics_text.h"

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
  f.with_process(
      2, {.pid = 102, .environ = std::vector<std::string>{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=2"}});
  Session& s = f.session();
  MetricsFrame m = read_metrics_frame(s.driver(), s.seams());
  EXPECT_TRUE(m.cuda_known) << m.cuda_error;
  ASSERT_TRUE(row(m, 101) && row(m, 102) && row(m, 103));  // beside the host's own process
  EXPECT_EQ(row(m, 101)->cuda_ordinal, 0);                 // FASTEST_FIRST: its "1" is nvidia-smi GPU 0
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
  // Issue 53: a process whose CUDA cannot see the GPU says "none" (top's and fleet's word), not
  // the same nothing as a process whose view is unknown.
  EXPECT_NE(e.text().find("pid=\"103\",type=\"compute\",uuid=\"" + m.snapshot.gpus[0].uuid +
                          "\",nvml_index=\"0\",cuda_ordinal=\"none\""),
            std::string::npos)
      << e.text();
}

/// The label names of each sample line of an exposition (comments skipped), read as the format
/// writes them: a value ends at an unescaped quote.
std::vector<std::vector<std::string>> sample_labels(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> names;
    size_t i = line.find('{');
    if (i != std::string::npos && i < line.find(' ')) {
      while (line[i] != '}') {
        size_t eq = line.find('=', i + 1);
        names.push_back(line.substr(i + 1, eq - i - 1));
        size_t j = eq + 2;  // after ="
        while (line[j] != '"') j += line[j] == '\\' ? 2 : 1;
        i = j + 1;  // ',' or '}'
      }
    }
    out.push_back(names);
  }
  return out;
}

// Mimir refuses a series with more than 30 labels (its default max_label_names_per_series), and
// what gpumap writes is not all a series gets: Prometheus adds __name__, job and instance, the
// Prometheus Operator also pod, namespace, service, container and endpoint (gpumap's own pod,
// namespace and container become exported_*).  So the default exposition of the largest simulated
// host, with processes that have every label (a Slurm job and rank, a pod, a lease), keeps each
// series within 30 - 8 = 22 labels.
TEST(ReadMetricsFrame, TheDefaultSeriesStayWithinMimirsLabelLimit) {
  FakeSession f("dgx8");
  for (uint32_t g = 0; g < 8; ++g)
    for (uint32_t k = 0; k < 8; ++k)
      f.with_process(g,
                     {.pid = 300 + 8 * g + k,
                      .environ = std::vector<std::string>{"SLURM_JOB_ID=77", "SLURM_PROCID=" + std::to_string(k),
                                                          "LOCAL_RANK=" + std::to_string(k),
                                                          "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"}},
                     512 + k);
  Session& s = f.session();
  MetricsFrame m = read_metrics_frame(s.driver(), s.seams());
  ASSERT_GE(m.ps.result.rows.size(), 64u);
  for (ProcessRow& r : m.ps.result.rows) {  // the kubelet is not asked here: name a pod as it would
    r.pod = PodRef{};
    r.pod->name = "trainer-" + std::to_string(r.pid);
    r.pod->ns = "ml";
    r.pod->container = "main";
  }
  LeaseState held;
  held.held = true;
  held.holder = LeaseRecord{};
  held.holder->pid = 1;
  held.holder->user = "alice";
  for (auto& [uuid, lease] : m.ps.leases) lease = held;
  Exposition e;
  add_frame_metrics(e, metrics_input(m));
  size_t widest = 0, info = 0;
  for (const std::vector<std::string>& names : sample_labels(e.text())) {
    widest = std::max(widest, names.size());
    if (names.size() == 16) ++info;
  }
  EXPECT_EQ(widest, 16u) << e.text();  // gpumap_process_info, every label set (launcher_job: torchrun's run)
  EXPECT_GE(info, 64u);
  EXPECT_LE(widest + 8, 30u);
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
  Exposition e;
  add_frame_metrics(e, metrics_input(m));
  EXPECT_EQ(e.text().find("cuda_ordinal="), std::string::npos) << "unknown is no label, never \"none\": " << e.text();
}

}  // namespace
}  // namespace gpumap
