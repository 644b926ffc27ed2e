#include "session/fleet.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "findings/fail_on.h"
#include "model/error.h"
#include "model/text.h"
#include "prom/fleet_join.h"
#include "prom/query_api.h"

namespace gpumap {

FleetAnswer read_fleet(const FleetRequest& req, HttpTransport& http, double now) {
  HttpUrl url = prometheus_url(req.prometheus);
  FleetQueries q = fleet_queries(req.filter);
  FleetSeries s;
  PromBudget budget;  // every answer of this read together (docs/fleet.md, "Memory")
  std::vector<PromAsk> asks;
  // Every process, or (auto, with-findings) each GPU's count: at 1 000 nodes listing all 62 720
  // was most of the time (docs/fleet.md, "Scale").  Then auto asks for all of them when the
  // counts say they are few, else the processes the findings name; every query is evaluated at
  // `now`, so the second round sees the same series as the first.
  if (req.processes == FleetProcessList::kAll) {
    asks.push_back({&q.processes, &s.processes});
  } else {
    asks.push_back({&q.process_counts, &s.process_counts});
    s.listed = FleetProcessList::kWithFindings;
  }
  for (auto [query, into] : std::vector<std::pair<const std::string*, PromResult*>>{
           {&q.gauges, &s.gauges}, {&q.findings, &s.findings}, {&q.up, &s.up}, {&q.last_read, &s.last_read},
           {&q.health, &s.health}, {&q.gpus, &s.gpus}, {&q.info_counts, &s.info_counts}})
    if (!query->empty()) asks.push_back({query, into});
  instant_queries(url, http, asks, now, req.timeout_s, budget);
  if (req.processes == FleetProcessList::kAuto && counted_processes(s.process_counts) <= kFleetListLimit) {
    instant_queries(url, http, {{&q.processes, &s.processes}}, now, req.timeout_s, budget);
    s.listed = FleetProcessList::kAll;
  } else if (req.processes != FleetProcessList::kAll) {
    // The processes the findings name, by their nodes and pids (the findings were answered).
    std::vector<std::pair<std::string, std::string>> places = finding_places(s.findings);
    std::string which = finding_processes_query(req.filter, places);
    if (!which.empty()) instant_queries(url, http, {{&which, &s.processes}}, now, req.timeout_s, budget);
    keep_places(s.processes, places);
  }
  FleetAnswer a = join_fleet(s, req.filter, now);
  a.prometheus = url.shown();
  for (const PromResult* r :
       {&s.up, &s.last_read, &s.health, &s.gpus, &s.gauges, &s.processes, &s.findings, &s.info_counts, &s.process_counts})
    for (const std::string& w : r->warnings) a.warnings.push_back("Prometheus: " + w);
  return a;
}

FleetAnswer read_fleet(const FleetRequest& req) {
  prometheus_url(req.prometheus);  // a bad URL before the config file
  std::unique_ptr<HttpTransport> http = prometheus_transport(req.http_config_file);
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return read_fleet(req, *http, now);
}

FleetProcessList parse_fleet_processes(const std::string& text) {
  if (text == "auto") return FleetProcessList::kAuto;
  if (text == "all") return FleetProcessList::kAll;
  if (text == "with-findings") return FleetProcessList::kWithFindings;
  throw Error(kExitUsage, "fleet: --processes `" + printable(text) + "` is not a choice it takes",
              "--processes auto (every process when there are at most " + std::to_string(kFleetListLimit) +
                  ", else those with findings), all, or with-findings");
}

double parse_fleet_timeout(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0 || v > 3600)
    throw Error(kExitUsage, "fleet: --timeout `" + printable(text) + "` is not a number of seconds above 0 and at most 3600",
                "e.g. --timeout 10 (each query's limit)");
  return v;
}

std::optional<Severity> parse_fleet_fail_on(const std::optional<std::string>& value) {
  return parse_fail_on_severity("fleet", value);
}

Severity fleet_worst(const FleetAnswer& a) {
  Severity w = Severity::kInfo;
  for (const FleetCause& c : a.causes) w = std::max(w, c.severity);
  for (const FleetNode& n : a.nodes)
    if (!n.up) w = Severity::kError;
  return w;
}

}  // namespace gpumap
