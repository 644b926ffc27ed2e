#include "prom/fleet_join.h"

#include <gtest/gtest.h>

#include <set>

#include "fleet/fleet_fixture.h"
#include "prom/promql.h"

namespace gpumap {
namespace {

using testing::kFleetNow;
using testing::three_node_fleet;

const FleetNode& node(const FleetAnswer& a, const std::string& name) {
  for (const FleetNode& n : a.nodes)
    if (n.node == name) return n;
  throw std::runtime_error("no node " + name);
}

TEST(FleetJoin, NodesGpusAndProcessesWithTheirOwnCudaOrdinal) {
  FleetAnswer a = join_fleet(three_node_fleet(), {}, kFleetNow);
  ASSERT_EQ(a.nodes.size(), 3u);
  const FleetNode& na = node(a, "node-a");
  EXPECT_EQ(na.instance, "node-a:9467");
  EXPECT_EQ(na.job, "gpumap");
  EXPECT_TRUE(na.up);
  EXPECT_EQ(na.last_read_age_s, 1.0);
  EXPECT_EQ(na.exporter_up, true);
  ASSERT_EQ(na.gpus.size(), 2u);
  EXPECT_EQ(na.gpus[0].nvml_index, 0);
  EXPECT_EQ(na.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(na.gpus[0].memory_total_bytes, 81559.0 * 1048576);
  EXPECT_EQ(na.gpus[0].utilization_ratio, 0.97);
  EXPECT_EQ(na.gpus[0].temperature_celsius, 61);
  EXPECT_FALSE(na.gpus[1].memory_used_bytes);  // no sample: unknown, never 0
  ASSERT_EQ(na.gpus[1].processes.size(), 1u);
  EXPECT_EQ(na.gpus[1].processes[0].pid, 101);
  EXPECT_EQ(na.gpus[1].processes[0].cuda_ordinal, 1);
  EXPECT_EQ(na.gpus[1].processes[0].findings, std::vector<std::string>{"rank-on-wrong-gpu"});
  EXPECT_EQ(na.host_findings, std::vector<std::string>{"order-differs"});
  const FleetNode& nb = node(a, "node-b");
  ASSERT_EQ(nb.gpus.size(), 2u);
  EXPECT_EQ(nb.gpus[0].processes.size(), 2u);  // pid 201 in the compute and graphics lists is one process
}

TEST(FleetJoin, ADownNodeIsShownWithTheAgeOfItsLastRead) {
  FleetAnswer a = join_fleet(three_node_fleet(), {}, kFleetNow);
  const FleetNode& nc = node(a, "node-c");
  EXPECT_FALSE(nc.up);
  EXPECT_EQ(nc.last_read_age_s, 95.0);
  EXPECT_TRUE(nc.gpus.empty());
}

TEST(FleetJoin, EveryTargetOfTheScrapeJobIsANodeThoseNeverReadDown) {
  FleetAnswer a = join_fleet(testing::fleet_with_unread_targets(), {}, kFleetNow);
  ASSERT_EQ(a.nodes.size(), 5u);
  EXPECT_TRUE(node(a, "node-a").up);
  EXPECT_EQ(node(a, "node-a").down_reason, "");
  // node-c: down within the hour, its age from the hour's sample, not the 14 days' (3 d).
  EXPECT_EQ(node(a, "node-c").down_reason, "scrape_failed");
  EXPECT_EQ(node(a, "node-c").last_read_age_s, 95.0);
  // node-d never came up: DOWN, never read, no GPU.
  const FleetNode& nd = node(a, "node-d");
  EXPECT_FALSE(nd.up);
  EXPECT_EQ(nd.down_reason, "scrape_failed");
  EXPECT_EQ(nd.last_read_age_s, std::nullopt);
  EXPECT_EQ(nd.job, "gpumap");
  EXPECT_TRUE(nd.gpus.empty());
  // node-e is scraped (`up` 1) but exports none of gpumap's series: DOWN, said why.
  const FleetNode& ne = node(a, "node-e");
  EXPECT_FALSE(ne.up);
  EXPECT_EQ(ne.down_reason, "no_gpumap_series");
  EXPECT_EQ(ne.last_read_age_s, std::nullopt);
  // A node whose only gpumap series is gpumap_build_info (no GPU, health not exported) is up.
  FleetSeries s = testing::fleet_with_unread_targets();
  s.health.samples.push_back({{{"__name__", "gpumap_build_info"}, {"instance", "node-e:9467"}}, 1, kFleetNow});
  EXPECT_TRUE(node(join_fleet(s, {}, kFleetNow), "node-e").up);
  // A filter on content keeps them (down: they may hold what was asked).
  FleetFilter f;
  f.users = {"bob"};
  std::set<std::string> kept;
  for (const FleetNode& n : join_fleet(testing::fleet_with_unread_targets(), f, kFleetNow).nodes) kept.insert(n.node);
  EXPECT_EQ(kept, (std::set<std::string>{"node-b", "node-c", "node-d", "node-e"}));
}

TEST(FleetJoin, ADownNodesLastReadIsLookedForOver14Days) {
  FleetSeries s = testing::fleet_with_unread_targets();
  // Down with no read in the hour: node-d (up 0) and node-e (no series); node-c has its read.
  EXPECT_EQ(unread_down_instances(s), (std::vector<std::string>{"node-d:9467", "node-e:9467"}));
  std::string q = long_last_read_query(unread_down_instances(s));
  EXPECT_NE(q.find("gpumap_exporter_last_success_timestamp_seconds{instance=~\"(?:node\\\\-d\\\\:9467|node\\\\-e\\\\:9467)\"}[14d]"),
            std::string::npos)
      << q;
  EXPECT_EQ(long_last_read_query({}), "");
  // An answer for node-d: its age 3 days; the hour's own sample is never replaced.
  s.last_read_long.samples.push_back({{{"instance", "node-d:9467"}, {"job", "gpumap"}}, kFleetNow - 3 * 86400, kFleetNow});
  FleetAnswer a = join_fleet(s, {}, kFleetNow);
  EXPECT_EQ(node(a, "node-d").last_read_age_s, 3 * 86400.0);
  EXPECT_EQ(node(a, "node-c").last_read_age_s, 95.0);
  EXPECT_EQ(node(a, "node-e").last_read_age_s, std::nullopt);
}

TEST(FleetJoin, OneJobAcrossTwoNodesWithItsRanksCudaOrdinals) {
  FleetAnswer a = join_fleet(three_node_fleet(), {}, kFleetNow);
  ASSERT_EQ(a.jobs.size(), 1u);
  const FleetJob& j = a.jobs[0];
  EXPECT_EQ(j.slurm_job_id, "77");
  EXPECT_EQ(j.nodes, (std::vector<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(j.ranks.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(j.ranks[i].rank, std::to_string(i));
  EXPECT_EQ(j.ranks[1].node, "node-a");
  ASSERT_EQ(j.ranks[1].gpus.size(), 1u);
  EXPECT_EQ(j.ranks[1].gpus[0].cuda_ordinal, 1);
  EXPECT_EQ(j.ranks[1].gpus[0].nvml_index, 1);
  EXPECT_EQ(j.ranks[3].node, "node-b");
  EXPECT_EQ(j.ranks[3].gpus.size(), 1u);  // compute and graphics: one GPU once
  EXPECT_EQ(j.finding_ids, (std::vector<std::string>{"rank-on-wrong-gpu", "ranks-share-gpu"}));
}

TEST(FleetJoin, FindingsGroupedByCauseMostSevereFirst) {
  FleetAnswer a = join_fleet(three_node_fleet(), {}, kFleetNow);
  ASSERT_EQ(a.causes.size(), 3u);
  EXPECT_EQ(a.causes[0].id, "rank-on-wrong-gpu");
  EXPECT_EQ(a.causes[0].severity, Severity::kError);
  EXPECT_EQ(a.causes[1].id, "order-differs");
  EXPECT_EQ(a.causes[2].id, "ranks-share-gpu");
  ASSERT_EQ(a.causes[2].places.size(), 2u);
  EXPECT_EQ(a.causes[2].places[0].slurm_job_id, "77");
  EXPECT_EQ(a.causes[1].places[0].pid, std::nullopt);
}

TEST(FleetJoin, AMissingLabelIsUnknownNeverACrash) {
  FleetSeries s = three_node_fleet();
  FleetAnswer a = join_fleet(s, {}, kFleetNow);
  const FleetProcess& pod = node(a, "node-b").gpus[1].processes[0];
  EXPECT_EQ(pod.pid, 300);
  EXPECT_EQ(pod.command, std::nullopt);  // dropped by a series budget
  EXPECT_EQ(pod.cuda_ordinal, std::nullopt);
  EXPECT_EQ(pod.pod, "trainer-0");
  EXPECT_EQ(pod.ns, "ml");
  // Series with almost nothing: no instance, no uuid, a pid that is not a number.
  s.processes.samples.push_back({{{"__name__", "gpumap_process_info"}}, 1, kFleetNow});
  s.processes.samples.push_back({{{"instance", "node-a:9467"}, {"uuid", "GPU-aaaa0000"}, {"pid", "x"}}, 1, kFleetNow});
  s.gpus.samples.push_back({{{"instance", "node-a:9467"}, {"uuid", "GPU-cccc"}}, 1, kFleetNow});
  s.findings.samples.push_back({{{"instance", "node-a:9467"}}, 1, kFleetNow});
  FleetAnswer b = join_fleet(s, {}, kFleetNow);
  const FleetNode& na = node(b, "node-a");
  ASSERT_EQ(na.gpus.size(), 3u);
  EXPECT_EQ(na.gpus[2].uuid, "GPU-cccc");
  EXPECT_EQ(na.gpus[2].nvml_index, std::nullopt);
  EXPECT_EQ(na.gpus[0].processes.size(), 2u);
  EXPECT_EQ(na.gpus[0].processes[0].pid, std::nullopt);
  EXPECT_EQ(b.warnings.size(), 1u);  // two series could not be placed
}

TEST(FleetJoin, FiltersKeepWhatMatchedAndEveryDownNode) {
  FleetFilter f;
  f.users = {"bob"};
  FleetAnswer a = join_fleet(three_node_fleet(), f, kFleetNow);
  ASSERT_EQ(a.nodes.size(), 2u);  // node-b (bob's pod) and node-c (down: it may hold bob's processes)
  EXPECT_EQ(a.nodes[0].node, "node-b");
  ASSERT_EQ(a.nodes[0].gpus.size(), 1u);
  EXPECT_EQ(a.nodes[0].gpus[0].uuid, "GPU-bbbb1111");
  EXPECT_EQ(a.nodes[1].node, "node-c");
  EXPECT_TRUE(a.causes.empty());  // alice's findings and node-a's own are not bob's
  EXPECT_TRUE(a.jobs.empty());

  FleetFilter m;
  m.gpu_models = {"h100"};
  FleetAnswer h = join_fleet(three_node_fleet(), m, kFleetNow);
  EXPECT_EQ(h.nodes.size(), 2u);  // node-a and the down node-c
  EXPECT_EQ(h.nodes[0].gpus.size(), 2u);
  ASSERT_EQ(h.jobs.size(), 1u);
  EXPECT_EQ(h.jobs[0].ranks.size(), 2u);  // the job's ranks on H100s only

  FleetFilter n;
  n.nodes = {"node-b"};
  FleetAnswer nb = join_fleet(three_node_fleet(), n, kFleetNow);
  ASSERT_EQ(nb.nodes.size(), 1u);
  EXPECT_EQ(nb.nodes[0].gpus.size(), 2u);
  n.nodes = {"node-b:9467"};
  EXPECT_EQ(join_fleet(three_node_fleet(), n, kFleetNow).nodes.size(), 1u);
}

TEST(FleetJoin, QueriesCarryTheFiltersAsMatchers) {
  FleetFilter f;
  f.nodes = {"node-a"};
  f.jobs = {"77"};
  f.users = {"alice"};
  f.gpu_models = {"H100"};
  FleetQueries q = fleet_queries(f);
  const std::string node = "instance=~\"(?:node\\\\-a)(?::[0-9]+)?\"";
  for (const std::string* s : {&q.up, &q.last_read, &q.health, &q.gpus, &q.gauges, &q.processes, &q.findings})
    EXPECT_NE(s->find(node), std::string::npos) << *s;
  EXPECT_NE(q.processes.find("slurm_job_id=~\"(?:77)\""), std::string::npos) << q.processes;
  EXPECT_NE(q.processes.find("user=~\"(?:alice)\""), std::string::npos) << q.processes;
  EXPECT_NE(q.gpus.find("name=~\"(?i).*(?:H100).*\""), std::string::npos) << q.gpus;
  EXPECT_EQ(fleet_queries({}).gpus, "gpumap_gpu_info");
}

// Issue 44 item 4: at 1 000 nodes the info findings (two per process) were 126 000 of 126 500
// finding series and most of the whole-fleet time; without -v only their count by id is asked.
TEST(FleetJoin, InfoFindingsAreCountedNotListedUnlessVerbose) {
  FleetQueries q = fleet_queries({});
  EXPECT_EQ(q.findings, "gpumap_finding{severity!=\"info\"}");
  EXPECT_EQ(q.info_counts, "count by (id) (gpumap_finding{severity=\"info\"})");
  FleetFilter verbose;
  verbose.info = true;
  verbose.nodes = {"node-a"};
  q = fleet_queries(verbose);
  EXPECT_EQ(q.findings.find("severity"), std::string::npos) << q.findings;
  EXPECT_NE(q.findings.find("instance=~"), std::string::npos) << q.findings;
  EXPECT_EQ(q.info_counts, "");
  FleetAnswer a = join_fleet(three_node_fleet(), {}, kFleetNow);
  EXPECT_EQ(a.hidden_info, (std::map<std::string, long long>{{"process-exited", 2}}));
  for (const FleetCause& c : a.causes) EXPECT_NE(c.severity, Severity::kInfo) << c.id;
}

TEST(FleetJoin, NodeOfInstance) {
  EXPECT_EQ(node_of_instance("node-a:9467"), "node-a");
  EXPECT_EQ(node_of_instance("10.0.0.1:9467"), "10.0.0.1");
  EXPECT_EQ(node_of_instance("[fd00::1]:9467"), "fd00::1");
  EXPECT_EQ(node_of_instance("node-a"), "node-a");
}

TEST(FleetJoin, TheProcessesTheFindingsNameAreAskedByNodeAndPid) {
  FleetSeries s = three_node_fleet();
  // (instance, pid) of the warning and error findings with a pid, once each, sorted; not the
  // node's own finding, not an info one.
  s.findings.samples.push_back({{{"instance", "node-a:9467"}, {"id", "gpu-shared"}, {"severity", "info"}, {"pid", "100"}}, 1, kFleetNow});
  std::vector<std::pair<std::string, std::string>> places = finding_places(s.findings);
  EXPECT_EQ(places, (std::vector<std::pair<std::string, std::string>>{{"node-a:9467", "101"}, {"node-b:9467", "200"}, {"node-b:9467", "201"}}));
  EXPECT_EQ(finding_processes_query({}, places),
            "gpumap_process_info{instance=~\"(?:node\\\\-a\\\\:9467|node\\\\-b\\\\:9467)\",pid=~\"(?:101|200|201)\"}");
  EXPECT_EQ(finding_processes_query({}, {}), "");
  // The filters stay on it.
  FleetFilter f;
  f.users = {"x\"} or vector(1)"};
  f.gpu_models = {"H100"};
  std::string q = finding_processes_query(f, places);
  EXPECT_NE(q.find(label_matcher("user", f.users)), std::string::npos) << q;  // (escaped: promql_test.cc)
  EXPECT_NE(q.find(" and on(instance, uuid) gpumap_gpu_info{name=~"), std::string::npos) << q;
  // Past kExactFindingPlaces: one join in Prometheus instead of a matcher of every pid.
  std::vector<std::pair<std::string, std::string>> many;
  for (size_t k = 0; k <= kExactFindingPlaces; ++k) many.push_back({"n:1", std::to_string(k)});
  EXPECT_EQ(finding_processes_query({}, many),
            "(gpumap_process_info) and on(instance, pid) gpumap_finding{severity!=\"info\",pid!=\"\"}");
  // The matcher's cross product (node-a's pid 200 if it had one) is dropped.
  PromResult answer = s.processes;
  answer.samples.push_back({{{"instance", "node-a:9467"}, {"pid", "200"}, {"uuid", "GPU-aaaa0000"}}, 1, kFleetNow});
  keep_places(answer, places);
  std::set<std::pair<std::string, std::string>> kept;
  for (const PromSample& x : answer.samples) kept.insert({x.labels.at("instance"), x.labels.at("pid")});
  EXPECT_EQ(kept, (std::set<std::pair<std::string, std::string>>(places.begin(), places.end())));
}


// Issue 56 item 8: a count of 1e300 became -9223372036854775804 GPU processes (and a UBSan
// float-cast-overflow), a pid of -5 a process, a utilisation of 1e308 `inf %`.  Every number read
// is checked (finite, in range, integral where it must be); what fails is unknown (`?`, null) and
// said in a warning, never cast.
TEST(FleetJoin, NumbersOutOfRangeAreUnknownNeverCast) {
  FleetSeries s = three_node_fleet();
  const std::map<std::string, std::string> a0 = {{"instance", "node-a:9467"}, {"uuid", "GPU-aaaa0000"}};
  auto with = [](std::map<std::string, std::string> l, const std::string& k, const std::string& v) {
    l[k] = v;
    return l;
  };
  s.process_counts.samples = {{with(a0, "slurm_job_id", "77"), 1e300, kFleetNow},
                              {{{"instance", "node-a:9467"}, {"uuid", "GPU-aaaa1111"}}, 2.5, kFleetNow},
                              {{{"instance", "node-b:9467"}, {"uuid", "GPU-bbbb0000"}, {"slurm_job_id", "77"}}, 2, kFleetNow}};
  s.listed = FleetProcessList::kWithFindings;
  s.info_counts.samples = {{{{"id", "process-exited"}}, -1e300, kFleetNow}, {{{"id", "x"}}, 1e19, kFleetNow}};
  for (PromSample& g : s.gauges.samples) {
    if (g.labels["__name__"] == "gpumap_gpu_utilization_ratio") g.value = 1e308;
    if (g.labels["__name__"] == "gpumap_gpu_temperature_celsius") g.value = -1e9;
    if (g.labels["__name__"] == "gpumap_gpu_memory_total_bytes") g.value = -4096;
  }
  s.processes.samples.push_back({with(with(a0, "pid", "-5"), "cuda_ordinal", "-1"), 1, kFleetNow});
  s.processes.samples.push_back({with(with(a0, "pid", "99999999999"), "nvml_index", "7"), 1, kFleetNow});
  FleetAnswer a = join_fleet(s, {}, kFleetNow);
  const FleetNode& na = node(a, "node-a");
  EXPECT_EQ(na.gpus[0].utilization_ratio, std::nullopt);
  EXPECT_EQ(na.gpus[0].temperature_celsius, std::nullopt);
  EXPECT_EQ(na.gpus[0].memory_total_bytes, std::nullopt);
  EXPECT_FALSE(na.gpus[0].process_count_known);  // 1e300 is no count
  EXPECT_FALSE(na.gpus[1].process_count_known);  // nor is 2.5
  EXPECT_GE(na.gpus[0].process_count, 0);
  EXPECT_TRUE(node(a, "node-b").gpus[0].process_count_known);
  EXPECT_EQ(node(a, "node-b").gpus[0].process_count, 2);
  for (const FleetProcess& p : na.gpus[0].processes) {
    if (p.pid) {
      EXPECT_GT(*p.pid, 0);
      EXPECT_LE(*p.pid, 4194304);
    }
    if (p.cuda_ordinal) {
      EXPECT_GE(*p.cuda_ordinal, 0);
    }
  }
  ASSERT_EQ(a.jobs.size(), 1u);
  EXPECT_FALSE(a.jobs[0].gpu_processes_known);
  EXPECT_GE(a.jobs[0].gpu_processes, 0);
  EXPECT_TRUE(a.hidden_info.empty()) << a.hidden_info.begin()->second;
  bool said = false;
  for (const std::string& w : a.warnings) said |= w.find("not valid") != std::string::npos;
  EXPECT_TRUE(said);
  PromResult counts;
  counts.samples = {{{}, 1e300, 0}, {{}, 3, 0}};
  EXPECT_EQ(counted_processes(counts), 3);
}


// Issue 53: the exporter's cuda_ordinal="none" (its CUDA cannot see the GPU) is kept apart from a
// missing label (unknown): fleet said cuda:? for both.
TEST(FleetJoin, CudaOrdinalNoneIsKeptApartFromUnknown) {
  FleetSeries s = three_node_fleet();
  s.processes.samples.push_back({{{"instance", "node-a:9467"}, {"uuid", "GPU-aaaa0000"}, {"pid", "555"}, {"cuda_ordinal", "none"},
                                  {"slurm_job_id", "88"}, {"rank", "0"}},
                                 1, kFleetNow});
  FleetAnswer a = join_fleet(s, {}, kFleetNow);
  bool seen = false;
  for (const FleetProcess& p : node(a, "node-a").gpus[0].processes)
    if (p.pid == 555) {
      seen = true;
      EXPECT_TRUE(p.sees_no_gpu);
      EXPECT_EQ(p.cuda_ordinal, std::nullopt);
    } else {
      EXPECT_FALSE(p.sees_no_gpu) << *p.pid;
    }
  EXPECT_TRUE(seen);
  for (const FleetJob& j : a.jobs)
    if (j.slurm_job_id == "88") {
      ASSERT_EQ(j.ranks.size(), 1u);
      EXPECT_TRUE(j.ranks[0].gpus[0].sees_no_gpu);
    }
}

}  // namespace
}  // namespace gpumap
