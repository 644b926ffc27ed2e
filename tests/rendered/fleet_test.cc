// `gpumap fleet` as an operation and its rendering, in process (moved from src/session/ with its
// render assertions: session/ tests test answers, issue 57; tests/layers_test.cc).
#include "session/fleet.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "cli_helpers.h"
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

TEST(Fleet, TargetsNeverReadAreDownNodesAndFailTheHealthCheck) {
  FakePrometheus p(testing::fleet_with_unread_targets());
  p.series().last_read_long.samples.push_back(
      {{{"instance", "node-d:9467"}, {"job", "gpumap"}}, kFleetNow - 2 * 86400, kFleetNow});
  FleetAnswer a = read_fleet(request(), p, kFleetNow);
  ASSERT_EQ(a.nodes.size(), 5u);
  // The second round asked the 14 days for node-d and node-e only, at the same instant.
  bool asked = false;
  for (const std::string& t : p.targets)
    if (testing::query_of(t).find("[14d]") != std::string::npos) {
      asked = true;
      EXPECT_NE(testing::query_of(t).find("node\\\\-d\\\\:9467|node\\\\-e\\\\:9467"), std::string::npos) << t;
    }
  EXPECT_TRUE(asked);
  EXPECT_EQ(a.nodes[3].node, "node-d");
  EXPECT_EQ(a.nodes[3].last_read_age_s, 2 * 86400.0);
  EXPECT_EQ(fleet_worst(a), Severity::kError);
  // Only the unread targets' health: a fleet with no finding fails --fail-on warning for them alone.
  FleetSeries quiet = testing::fleet_with_unread_targets();
  quiet.findings.samples.clear();
  quiet.up.samples.erase(quiet.up.samples.begin() + 2);  // node-c's `up`: node-c is up as far as `up` says
  FakePrometheus q(quiet);
  FleetAnswer b = read_fleet(request(), q, kFleetNow);
  EXPECT_EQ(fleet_worst(b), Severity::kError);  // node-d and node-e
  std::string text = fleet_text(b);
  EXPECT_NE(text.find("node-d (node-d:9467, job gpumap): DOWN (the last scrape failed), never read (none in the last 14 days)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("node-e (node-e:9467, job gpumap): DOWN (scraped, but it exports none of gpumap's series"), std::string::npos)
      << text;
  nlohmann::json json = nlohmann::json::parse(fleet_json(b));
  std::map<std::string, nlohmann::json> reasons;
  for (const auto& n : json["nodes"]) reasons[n["node"]] = n["down_reason"];
  EXPECT_EQ(reasons["node-a"], nullptr);
  EXPECT_EQ(reasons["node-d"], "scrape_failed");
  EXPECT_EQ(reasons["node-e"], "no_gpumap_series");
}

TEST(Fleet, EveryQueryIsAPostOfAFormGetOnlyWhenTheServerAsks) {
  FakePrometheus p(testing::three_node_fleet());
  FleetAnswer a = read_fleet(request(), p, kFleetNow);
  ASSERT_EQ(p.methods.size(), 9u);
  for (size_t i = 0; i < p.methods.size(); ++i) {
    EXPECT_EQ(p.methods[i], "POST");
    EXPECT_EQ(p.targets[i].rfind("/api/v1/query?query=", 0), 0u);  // (kept as target?form)
  }
  // A server (or proxy) that answers 405 to a POST: each query asked again by GET, the same answer.
  FakePrometheus g(testing::three_node_fleet());
  g.refuse_post = true;
  FleetAnswer b = read_fleet(request(), g, kFleetNow);
  ASSERT_EQ(g.methods.size(), 18u);
  for (size_t i = 0; i < g.methods.size(); ++i) EXPECT_EQ(g.methods[i], i % 2 ? "GET" : "POST") << i;
  EXPECT_EQ(fleet_json(a), fleet_json(b));
}

TEST(Fleet, ASplitQueryGivesTheUnsplitAnswer) {
  // Every node down and unread, every process with a finding: the two queries built from node
  // lists (the findings' processes; the down nodes' last read over 14 days) split by node sets.
  FleetSeries s = testing::fleet_with_unread_targets();
  for (int i = 0; i < 40; ++i) {
    std::string inst = "node-x" + std::to_string(i) + ".cluster.example.org:9467";
    s.up.samples.push_back({{{"instance", inst}, {"job", "gpumap"}}, 0, kFleetNow});
    s.last_read_long.samples.push_back({{{"instance", inst}, {"job", "gpumap"}}, kFleetNow - 1000 - i, kFleetNow});
  }
  for (const PromSample& x : s.processes.samples) {
    std::map<std::string, std::string> l = {{"__name__", "gpumap_finding"}, {"instance", x.labels.at("instance")},
                                            {"id", "stray-context"}, {"severity", "warning"},
                                            {"pid", x.labels.at("pid")}, {"uuid", x.labels.at("uuid")}};
    s.findings.samples.push_back({l, 1, kFleetNow});
  }
  FleetRequest r = request();
  r.processes = FleetProcessList::kWithFindings;
  FakePrometheus whole(s);
  FleetAnswer one = read_fleet(r, whole, kFleetNow);
  r.query_budget_bytes = 300;
  FakePrometheus split(s);
  split.query_budget = 300;
  FleetAnswer parts = read_fleet(r, split, kFleetNow);
  EXPECT_EQ(whole.targets.size(), 10u);  // 8 at once, then the findings' processes and the 14 days
  EXPECT_GT(split.targets.size(), 15u);
  for (const std::string& t : split.targets)
    if (t.find("14d") != std::string::npos || t.find("pid%3D~") != std::string::npos) {
      EXPECT_LE(t.size() - std::string("/api/v1/query?").size(), 300u + 80u) << t;  // the query within the budget, plus time=
    }
  EXPECT_EQ(fleet_json(one), fleet_json(parts));
  EXPECT_EQ(one.nodes.size(), 45u);
  size_t aged = 0;
  for (const FleetNode& n : parts.nodes) aged += n.node.rfind("node-x", 0) == 0 && n.last_read_age_s.has_value();
  EXPECT_EQ(aged, 40u);
  EXPECT_EQ(split_for_budget({}, 10, [](const std::vector<std::string>&) { return std::string(); }).size(), 0u);
}

// An engine with a limit on the series a query answers (Mimir's max_fetched_series_per_query,
// VictoriaMetrics' -search.maxUniqueTimeseries): past it a 422 as Mimir words it.  A query whose
// node matcher names a set of instances is answered from those nodes' series only.
class LimitedPrometheus : public HttpTransport {
 public:
  LimitedPrometheus(FleetSeries s, size_t max_series) : s_(std::move(s)), max_(max_series) {}
  HttpAnswer get(const HttpUrl&, const std::string&, double) override { return {405, "Method Not Allowed", {}, ""}; }
  HttpAnswer post_form(const HttpUrl&, const std::string&, const std::string& form, double) override {
    const std::string q = testing::query_of("?" + form);
    std::vector<std::string> nodes;  // the shard's: instance=~"(?:a|b)(?::[0-9]+)?", escapes taken out
    const std::string open = "instance=~\"(?:", close = ")(?::[0-9]+)?\"";
    if (size_t at = q.find(open); at != std::string::npos) {
      std::string list = q.substr(at + open.size(), q.find(close, at) - at - open.size()), v;
      for (char c : list + "|")
        if (c == '|') nodes.push_back(std::exchange(v, ""));
        else if (c != '\\') v += c;
    }
    FleetSeries part = s_;
    for (PromResult* r : {&part.up, &part.last_read, &part.health, &part.gpus, &part.gauges, &part.processes, &part.findings})
      std::erase_if(r->samples, [&](const PromSample& x) {
        return !nodes.empty() && std::find(nodes.begin(), nodes.end(), x.labels.at("instance")) == nodes.end();
      });
    FleetFilter f;
    f.nodes = nodes;
    std::optional<PromResult> r = testing::answer_fleet_query(part, f, q);
    if (!r) r = testing::answer_fleet_query(part, {}, q);
    if (!r) return {400, "Bad Request", {}, R"({"status":"error","errorType":"bad_data","error":"unexpected query"})"};
    if (r->samples.size() > max_) {
      ++refused;
      return {422, "Unprocessable Entity", {},
              R"({"status":"error","errorType":"execution","error":"the query exceeded the maximum number of series (limit: )" +
                  std::to_string(max_) + " series) (err-mimir-max-series-per-query)\"}"};
    }
    ++answered;
    return {200, "OK", {}, testing::prom_body(*r)};
  }
  int refused = 0, answered = 0;

 private:
  FleetSeries s_;
  size_t max_;
};

TEST(Fleet, AQueryRefusedForItsSeriesIsAskedByNodeSetsWithTheSameAnswer) {
  FleetRequest r = request();
  r.processes = FleetProcessList::kAll;
  LimitedPrometheus whole(testing::three_node_fleet(), 1000);
  FleetAnswer one = read_fleet(r, whole, kFleetNow);
  EXPECT_EQ(whole.refused, 0);
  // At most 4 series a query: the gauges (5) and the processes (6) are refused whole, then asked
  // for half the nodes at a time (node-a; node-b and node-c).
  LimitedPrometheus limited(testing::three_node_fleet(), 4);
  FleetAnswer parts = read_fleet(r, limited, kFleetNow);
  EXPECT_EQ(limited.refused, 2);
  EXPECT_EQ(limited.answered, whole.answered - 2 + 2 * 2);  // each refused one in two halves
  EXPECT_EQ(fleet_json(one), fleet_json(parts));
  // At most 1: the processes of node-b alone are 4 series; refused, the error names the limit and the fix.
  LimitedPrometheus tiny(testing::three_node_fleet(), 1);
  try {
    read_fleet(r, tiny, kFleetNow);
    ADD_FAILURE() << "answered past the limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitError);
    EXPECT_NE(std::string(e.what()).find("refused the query for its size"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("max_fetched_series_per_query"), std::string::npos) << e.hint();
  }
}

TEST(Fleet, APartialAnswerSaysSoAndFailsTheHealthCheck) {
  // Thanos's partial response: 200, success, and a warning that a store did not answer; node-b's
  // store is the one: its series are gone from every answer but the hour's last read.
  FleetSeries s = testing::three_node_fleet();
  auto drop_b = [](PromResult& r) {
    std::erase_if(r.samples, [](const PromSample& x) { return x.labels.count("instance") && x.labels.at("instance") == "node-b:9467"; });
  };
  for (PromResult* r : {&s.up, &s.health, &s.gpus, &s.gauges, &s.processes, &s.findings}) drop_b(*r);
  s.findings.samples.clear();
  s.up.samples.pop_back();  // node-c removed from the targets: no node down but the missing one
  s.last_read.samples.pop_back();
  s.gpus.warnings = {"receive series from Addr: 10.0.0.7:10901 LabelSets: {replica=\"b\"}: rpc error: code = Unavailable"};
  FakePrometheus p(s);
  FleetAnswer a = read_fleet(request(), p, kFleetNow);
  EXPECT_TRUE(a.partial);
  EXPECT_EQ(a.partial_queries, std::vector<std::string>{"gpus"});
  std::set<std::string> missing;
  for (const FleetNode& n : a.nodes)
    if (n.down_reason == "not_in_answer") missing.insert(n.node);
  EXPECT_EQ(missing, std::set<std::string>{"node-b"});
  EXPECT_EQ(fleet_worst(a), Severity::kError);
  std::string text = fleet_text(a);
  EXPECT_NE(text.find("PARTIAL: the answer lacks part of the fleet"), std::string::npos) << text;
  EXPECT_NE(text.find("node-b (node-b:9467, job gpumap): MISSING (read within the hour, not in this partial answer"), std::string::npos)
      << text;
  EXPECT_NE(text.find("10.0.0.7:10901"), std::string::npos) << text;  // the engine's warning, said
  nlohmann::json json = nlohmann::json::parse(fleet_json(a));
  EXPECT_EQ(json["partial"], true);
  EXPECT_EQ(json["partial_queries"], nlohmann::json::array({"gpus"}));
  // The same fleet without the warning: node-b is gone from the targets, not missing; no error.
  s.gpus.warnings.clear();
  FakePrometheus q(s);
  FleetAnswer b = read_fleet(request(), q, kFleetNow);
  EXPECT_FALSE(b.partial);
  for (const FleetNode& n : b.nodes) EXPECT_NE(n.node, "node-b");
  EXPECT_EQ(fleet_worst(b), Severity::kInfo);
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

TEST(FleetHttp, PostsWithTheTenantHeaderAndNoHeadPast8KiB) {
  testing::FakePrometheusServer prometheus(testing::three_node_fleet());
  std::string dir = testing::temp_dir("fleet-tenant");
  std::ofstream(dir + "/tenant") << "gpumap\n";
  std::ofstream(dir + "/http.yml") << "http_headers:\n  X-Scope-OrgID:\n    files: [tenant]\n";
  FleetRequest r = request();
  r.prometheus = prometheus.url();
  r.http_config_file = dir + "/http.yml";
  // 1 500 --node values: a filter of 40 kB in every query, never in a request's head.
  for (int i = 0; i < 1500; ++i) r.filter.nodes.push_back("gpu-node-" + std::to_string(i) + ".example.org");
  r.filter.nodes.push_back("node-a");
  prometheus.filter = r.filter;
  FleetAnswer a = read_fleet(r);
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].node, "node-a");
  std::vector<std::string> heads = prometheus.heads();
  ASSERT_GE(heads.size(), 8u);
  for (const std::string& h : heads) {
    EXPECT_EQ(h.rfind("POST /api/v1/query HTTP/1.1\r\n", 0), 0u) << h.substr(0, 200);
    EXPECT_NE(h.find("\r\nX-Scope-OrgID: gpumap\r\n"), std::string::npos) << h;
    EXPECT_NE(h.find("\r\nContent-Type: application/x-www-form-urlencoded\r\n"), std::string::npos) << h;
    EXPECT_LT(h.size(), kHttpMaxRequestHead);
  }
  // A server that takes GET only: the same answer by GET, for queries that fit a URL.
  testing::FakePrometheusServer get_only(testing::three_node_fleet());
  get_only.refuse_post = true;
  FleetRequest g = request();
  g.prometheus = get_only.url();
  FleetAnswer b = read_fleet(g);
  EXPECT_EQ(b.nodes.size(), 3u);
  bool got = false;
  for (const std::string& h : get_only.heads()) got |= h.rfind("GET /api/v1/query?query=", 0) == 0;
  EXPECT_TRUE(got);
  // ... and one that does not fit a URL is refused naming the fix, never sent past 8 KiB.
  g.filter.nodes = r.filter.nodes;
  get_only.filter = g.filter;
  try {
    read_fleet(g);
    ADD_FAILURE() << "a 40 kB query sent by GET";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitError);
    EXPECT_NE(std::string(e.what()).find("too long to send in a GET's URL"), std::string::npos) << e.what();
  }
  for (const std::string& h : get_only.heads()) EXPECT_LT(h.size(), kHttpMaxRequestHead);
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
