#include "session/fleet.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "fleet/fleet_fixture.h"
#include "json_contract.h"
#include "model/error.h"
#include "output/fleet_view.h"
#include "prom/fleet_join.h"
#include "prom/http_client.h"

namespace gpumap {
namespace {

using testing::kFleetNow;

/// Prometheus in memory: answers each fleet query from `series`, or as told.
class FakePrometheus : public HttpTransport {
 public:
  explicit FakePrometheus(FleetSeries s) : series_(std::move(s)) {}
  HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) override {
    urls.push_back(url.shown());
    targets.push_back(target);
    if (fail) throw HttpError(*fail, "simulated");
    if (status) return {*status, "Status", {}, body};
    FleetQueries q = fleet_queries(filter);
    const PromResult* r = nullptr;
    for (auto [text, res] : {std::pair{&q.up, &series_.up}, {&q.last_read, &series_.last_read}, {&q.health, &series_.health},
                             {&q.gpus, &series_.gpus}, {&q.gauges, &series_.gauges}, {&q.processes, &series_.processes},
                             {&q.findings, &series_.findings}, {&q.info_counts, &series_.info_counts}})
      if (target.find("query=" + url_encode(*text) + "&") != std::string::npos) r = res;
    if (!r) return {400, "Bad Request", {}, R"({"status":"error","errorType":"bad_data","error":"unexpected query"})"};
    return {200, "OK", {}, testing::prom_body(*r)};
  }
  FleetFilter filter;
  std::optional<HttpFailure> fail;
  std::optional<int> status;
  std::string body;
  std::vector<std::string> urls, targets;

 private:
  FleetSeries series_;
};

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
  ASSERT_EQ(p.targets.size(), 8u);  // seven, and the info findings' count by id
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
