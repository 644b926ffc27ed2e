#include "session/fleet.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "fake_session.h"
#include "fleet/fake_prometheus.h"
#include "fleet/fleet_fixture.h"
#include "json_contract.h"
#include "model/error.h"
#include "output/fleet_view.h"
#include "prom/fleet_join.h"
#include "prom/http_client.h"

namespace gpumap {
namespace {

using testing::kFleetNow;

using FakePrometheus = testing::FakePrometheusTransport;  // Prometheus in memory (tests/fleet)

FleetRequest request() {
  FleetRequest r;
  r.prometheus = "http://prom.example:9090/";
  return r;
}

TEST(Fleet, ReadsEveryQueryAtOneTimeAndJoins) {
  FakePrometheus p(testing::three_node_fleet());
  FleetAnswer a = read_fleet(request(), p, kFleetNow);
  EXPECT_EQ(a.prometheus, "http://prom.example:9090");
  EXPECT_EQ(a.nodes.size(), 3u);
  EXPECT_EQ(a.jobs.size(), 1u);
  // Eight at once (six, the info findings' count by id, the processes counted), then, being few,
  // every process.
  ASSERT_EQ(p.targets.size(), 9u);
  EXPECT_EQ(a.listed, FleetProcessList::kAll);
  for (const std::string& t : p.targets) {
    EXPECT_EQ(t.rfind("/api/v1/query?query=", 0), 0u) << t;
    EXPECT_NE(t.find("&time=1796553056.000&timeout=10"), std::string::npos) << t;
  }
  EXPECT_EQ(fleet_worst(a), Severity::kError);  // rank-on-wrong-gpu, and node-c down
}

TEST(Fleet, TheFiltersReachPrometheus) {
  FakePrometheus p(testing::three_node_fleet());
  FleetRequest r = request();
  r.filter.jobs = {"77"};
  p.filter = r.filter;
  FleetAnswer a = read_fleet(r, p, kFleetNow);
  EXPECT_EQ(a.jobs.size(), 1u);
  bool asked = false;
  for (const std::string& t : p.targets) asked |= t.find(url_encode("slurm_job_id=~\"(?:77)\"")) != std::string::npos;
  EXPECT_TRUE(asked);
}

/// The fleet with `extra` processes more on node-a's GPU 0 (pids 1000...), each of Slurm job 90.
FleetSeries crowded(int extra) {
  FleetSeries s = testing::three_node_fleet();
  PromSample model = s.processes.samples[0];
  for (int i = 0; i < extra; ++i) {
    PromSample x = model;
    x.labels["pid"] = std::to_string(1000 + i);
    x.labels["slurm_job_id"] = "90";
    x.labels["rank"] = std::to_string(i);
    s.processes.samples.push_back(x);
  }
  return s;
}

TEST(Fleet, PastTheLimitOnlyTheProcessesWithFindingsAreListedAndEveryCountIsWhole) {
  // 5 processes in the fixture (pid 201 twice: compute and graphics); at the limit all are listed.
  FakePrometheus few(crowded(static_cast<int>(kFleetListLimit) - 5));
  FleetAnswer a = read_fleet(request(), few, kFleetNow);
  EXPECT_EQ(a.listed, FleetProcessList::kAll);
  EXPECT_EQ(a.nodes[0].gpus[0].processes.size(), static_cast<size_t>(kFleetListLimit) - 5 + 1);
  auto asked_every_process = [](const FakePrometheus& f) {
    for (const std::string& t : f.targets)
      if (t.find("query=" + url_encode(fleet_queries({}).processes) + "&") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(asked_every_process(few));

  FakePrometheus many(crowded(static_cast<int>(kFleetListLimit) - 4));
  FleetAnswer b = read_fleet(request(), many, kFleetNow);
  EXPECT_FALSE(asked_every_process(many));  // only those the findings name, by node and pid
  EXPECT_EQ(many.targets.size(), 9u);
  EXPECT_EQ(b.listed, FleetProcessList::kWithFindings);
  ASSERT_EQ(b.nodes.size(), 3u);
  const FleetGpu& a0 = b.nodes[0].gpus[0];
  EXPECT_EQ(a0.process_count, kFleetListLimit - 4 + 1);
  EXPECT_TRUE(a0.processes.empty());  // none of them has a finding
  const FleetGpu& a1 = b.nodes[0].gpus[1];
  EXPECT_EQ(a1.process_count, 1);
  ASSERT_EQ(a1.processes.size(), 1u);  // pid 101: rank-on-wrong-gpu
  EXPECT_EQ(a1.processes[0].findings, std::vector<std::string>{"rank-on-wrong-gpu"});
  EXPECT_EQ(b.nodes[1].gpus[0].process_count, 2);  // pid 200 and 201 (201 twice: one process)
  EXPECT_EQ(b.nodes[1].gpus[0].processes.size(), 2u);
  EXPECT_EQ(b.nodes[1].gpus[1].process_count, 1);  // the pod's, no finding
  EXPECT_TRUE(b.nodes[1].gpus[1].processes.empty());
  // Jobs from the counts: job 90's ranks all on node-a, none listed; job 77 on both nodes.
  ASSERT_EQ(b.jobs.size(), 2u);
  EXPECT_EQ(b.jobs[0].slurm_job_id, "77");
  EXPECT_EQ(b.jobs[0].gpu_processes, 4);
  EXPECT_EQ(b.jobs[0].nodes, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(b.jobs[0].ranks.size(), 3u);  // 101, 200, 201: those with a finding
  EXPECT_EQ(b.jobs[1].slurm_job_id, "90");
  EXPECT_EQ(b.jobs[1].gpu_processes, kFleetListLimit - 4);
  EXPECT_TRUE(b.jobs[1].ranks.empty());
  // The causes are the same as with every process listed.
  FleetRequest all = request();
  all.processes = FleetProcessList::kAll;
  FleetAnswer c = read_fleet(all, many, kFleetNow);
  EXPECT_EQ(c.listed, FleetProcessList::kAll);
  ASSERT_EQ(b.causes.size(), c.causes.size());
  for (size_t i = 0; i < b.causes.size(); ++i) {
    EXPECT_EQ(b.causes[i].id, c.causes[i].id);
    ASSERT_EQ(b.causes[i].places.size(), c.causes[i].places.size());
    for (size_t k = 0; k < b.causes[i].places.size(); ++k)
      EXPECT_EQ(b.causes[i].places[k].slurm_job_id, c.causes[i].places[k].slurm_job_id);
  }
  EXPECT_EQ(c.nodes[0].gpus[0].process_count, kFleetListLimit - 4 + 1);
  EXPECT_EQ(c.jobs[1].gpu_processes, kFleetListLimit - 4);
  TermStyle plain;
  std::string t = fleet_text(b, plain);
  EXPECT_NE(t.find("Listed: the 3 processes with a warning or error finding, and each GPU's count (over 2000 GPU processes; "
                   "--processes all lists every one; --node, --job or --user narrows)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("memory 1024 / 81559 MiB, utilisation 97 %, 61 C, 1997 processes"), std::string::npos) << t;
  EXPECT_NE(t.find("job 90: 1996 GPU processes on 1 node (node-a)  (no rank with a finding)"), std::string::npos) << t;
  EXPECT_NE(t.find("job 77: 4 GPU processes on 2 nodes (node-a, node-b)  findings: rank-on-wrong-gpu ranks-share-gpu  (the ranks with a finding:)"),
            std::string::npos)
      << t;
  nlohmann::json j = nlohmann::json::parse(fleet_json(b));
  EXPECT_EQ(j["processes_listed"], "with-findings");
  EXPECT_EQ(j["nodes"][0]["gpus"][0]["process_count"], kFleetListLimit - 3);
  EXPECT_EQ(j["jobs"][1]["gpu_processes"], kFleetListLimit - 4);
  testing::Checker checker(testing::read_contract());
  EXPECT_EQ(checker.check(nlohmann::ordered_json::parse(fleet_json(b)), "fleet", "fleet"), "");
}

TEST(Fleet, WithFindingsNeverListsEveryProcessAndAFilterStillCounts) {
  FakePrometheus p(testing::three_node_fleet());
  FleetRequest r = request();
  r.processes = FleetProcessList::kWithFindings;
  r.filter.users = {"bob"};
  p.filter = r.filter;
  FleetAnswer a = read_fleet(r, p, kFleetNow);
  EXPECT_EQ(p.targets.size(), 9u);
  EXPECT_EQ(a.listed, FleetProcessList::kWithFindings);
  // The count asks for bob's processes only (Prometheus filters; this fake does not), and the
  // join lists none of another user's.
  bool counted_bob = false;
  for (const std::string& t : p.targets)
    counted_bob |= t.find(url_encode("count by (instance, uuid, slurm_job_id)")) != std::string::npos &&
                   t.find(url_encode("user=~\"(?:bob)\"")) != std::string::npos;
  EXPECT_TRUE(counted_bob);
  for (const FleetNode& n : a.nodes)
    for (const FleetGpu& g : n.gpus)
      for (const FleetProcess& x : g.processes) EXPECT_EQ(x.user, "bob");
  EXPECT_EQ(parse_fleet_processes("auto"), FleetProcessList::kAuto);
  EXPECT_EQ(parse_fleet_processes("all"), FleetProcessList::kAll);
  EXPECT_EQ(parse_fleet_processes("with-findings"), FleetProcessList::kWithFindings);
  EXPECT_EQ(testing::code_of([] { parse_fleet_processes("some"); }), kExitUsage);
}

TEST(Fleet, EachFailureNamesTheUrlAndTheFix) {
  auto message = [](FakePrometheus& p, int want_code) {
    try {
      read_fleet(request(), p, kFleetNow);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), want_code) << e.what();
      EXPECT_NE(std::string(e.what()).find("http://prom.example:9090"), std::string::npos) << e.what();
      EXPECT_FALSE(e.hint().empty());
      return std::string(e.what()) + " | " + e.hint();
    }
    ADD_FAILURE() << "no error";
    return std::string();
  };
  FakePrometheus p(testing::three_node_fleet());
  p.fail = HttpFailure::kRefused;
  EXPECT_NE(message(p, kExitError).find("refused the connection"), std::string::npos);
  p.fail = HttpFailure::kTimeout;
  EXPECT_NE(message(p, kExitError).find("did not answer within 10 s"), std::string::npos);
  p.fail = HttpFailure::kTls;
  EXPECT_NE(message(p, kExitError).find("ca_file"), std::string::npos);
  p.fail.reset();
  p.status = 401;
  EXPECT_NE(message(p, kExitError).find("--http.config.file"), std::string::npos);
  p.status = 404;
  p.body = "404 page not found\n";
  EXPECT_NE(message(p, kExitError).find("has no query API"), std::string::npos);
  p.status = 422;
  p.body = R"({"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"})";
  std::string m = message(p, kExitError);
  EXPECT_NE(m.find("execution: query processing would load too many samples"), std::string::npos) << m;
  EXPECT_NE(m.find("--node"), std::string::npos) << m;
}

/// The error read_fleet says for `url` within `timeout_s`, and how long it took.
std::pair<std::string, double> fleet_error(const std::string& url, double timeout_s) {
  FleetRequest r;
  r.prometheus = url;
  r.timeout_s = timeout_s;
  auto start = std::chrono::steady_clock::now();
  std::string said = "no error";
  try {
    read_fleet(r);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitError) << e.what();
    said = std::string(e.what()) + " | " + e.hint();
  }
  return {said, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// Issue 56 item 2: an answer that keeps arriving (chunked, a byte every 10 ms) was read until the
// server stopped; --timeout now ends the whole answer, and says so.
TEST(FleetHostile, AnAnswerThatNeverEndsEndsAtTheTimeout) {
  testing::HostilePrometheusServer forever([](int fd, const std::atomic<bool>& stop) {
    if (!testing::HostilePrometheusServer::send(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
    for (int i = 0; i < 1000 && !stop; ++i) {  // 10 s at most
      if (!testing::HostilePrometheusServer::send(fd, "1\r\n \r\n")) return;  // JSON white space
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  auto [said, took] = fleet_error(forever.url(), 1);
  EXPECT_NE(said.find("did not answer within 1 s"), std::string::npos) << said;
  EXPECT_LT(took, 4.0) << said;
}

// Issue 56 item 1: 20 MB of `[` was read whole and built into a JSON tree (1.5 GB) before it was
// refused as "not JSON"; it is refused as it arrives, by the depth budget, naming the limit.
TEST(FleetHostile, DeepNestingIsRefusedAsItArrives) {
  testing::HostilePrometheusServer deep([](int fd, const std::atomic<bool>&) {
    const size_t size = 20 << 20;
    if (!testing::HostilePrometheusServer::send(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n")) return;
    std::string block(1 << 16, '[');
    for (size_t sent = 0; sent < size; sent += block.size())
      if (!testing::HostilePrometheusServer::send(fd, block)) return;  // the client stopped reading
  });
  auto [said, took] = fleet_error(deep.url(), 10);
  EXPECT_NE(said.find("answered more than gpumap takes"), std::string::npos) << said;
  EXPECT_NE(said.find("nested deeper than"), std::string::npos) << said;
}

// Issue 56 item 13: an interim `100 Continue` before each answer was taken as the answer (HTTP
// 100, "something other than a query answer"); the answer after it is read.
TEST(FleetHostile, AnInterimAnswerBeforeEachAnswerIsSkipped) {
  testing::FakePrometheusServer prometheus(testing::three_node_fleet(), "HTTP/1.1 100 Continue\r\n\r\n");
  FleetRequest r;
  r.prometheus = prometheus.url();
  FleetAnswer a = read_fleet(r);
  EXPECT_EQ(a.nodes.size(), 3u);
}

TEST(Fleet, BadInputIsAUsageError) {
  FakePrometheus p(testing::three_node_fleet());
  FleetRequest r = request();
  r.prometheus = "";
  EXPECT_EQ(testing::code_of([&] { read_fleet(r, p, kFleetNow); }), kExitUsage);
  r.prometheus = "prom.example:9090";
  EXPECT_EQ(testing::code_of([&] { read_fleet(r, p, kFleetNow); }), kExitUsage);
  EXPECT_TRUE(p.targets.empty());  // nothing asked
  EXPECT_EQ(testing::code_of([] { parse_fleet_timeout("0"); }), kExitUsage);
  EXPECT_EQ(testing::code_of([] { parse_fleet_timeout("1x"); }), kExitUsage);
  EXPECT_EQ(parse_fleet_timeout("2.5"), 2.5);
  EXPECT_EQ(testing::code_of([] { parse_fleet_fail_on(std::string("info")); }), kExitUsage);
}

TEST(Fleet, TheJsonMatchesTheContractAndTheTextSaysEverything) {
  FakePrometheus p(testing::three_node_fleet());
  FleetAnswer a = read_fleet(request(), p, kFleetNow);
  testing::Checker checker(testing::read_contract());
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(fleet_json(a));
  EXPECT_EQ(checker.check(j, "fleet", "fleet"), "");
  EXPECT_EQ(j["nodes"][2]["up"], false);
  EXPECT_EQ(j["nodes"][1]["gpus"][1]["processes"][0]["command"], nullptr);
  EXPECT_EQ(j["jobs"][0]["ranks"][3]["gpus"][0]["cuda_ordinal"], 0);
  TermStyle plain;
  std::string t = fleet_text(a, plain);
  EXPECT_NE(t.find("3 nodes (1 down)"), std::string::npos) << t;
  EXPECT_NE(t.find("node-c (node-c:9467, job gpumap): DOWN (the last scrape failed), last read 95 s ago"), std::string::npos) << t;
  EXPECT_NE(t.find("job 77: 4 ranks on 2 nodes (node-a, node-b)"), std::string::npos) << t;
  EXPECT_NE(t.find("rank 1  node-a  pid 101  cuda:1 = GPU 1 GPU-aaaa1111"), std::string::npos) << t;
  EXPECT_NE(t.find("[error] rank-on-wrong-gpu: 1 place on 1 node"), std::string::npos) << t;
  EXPECT_NE(t.find("[warning] ranks-share-gpu: 2 places on 1 node"), std::string::npos) << t;
  EXPECT_NE(t.find("pid 300  cuda:?  bob  pod ml/trainer-0  ?"), std::string::npos) << t;
  EXPECT_NE(t.find("2 info findings not listed (process-exited 2): -v lists them"), std::string::npos) << t;
  EXPECT_EQ(j["info_findings_not_listed"]["process-exited"], 2);
  FleetRequest verbose = request();
  verbose.filter.info = true;
  p.filter = verbose.filter;
  FleetAnswer v = read_fleet(verbose, p, kFleetNow);
  EXPECT_EQ(fleet_text(v, plain).find("not listed"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(fleet_json(v))["info_findings_not_listed"].is_null());
}

}  // namespace
}  // namespace gpumap
