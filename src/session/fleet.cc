#include "session/fleet.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <thread>
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

namespace {

/// A query of a read, with how to make it for a set of nodes (empty: it cannot be sharded).
struct Ask {
  const std::string* query;
  PromResult* into;
  std::function<std::string(const FleetFilter&)> build;
  bool counts = false;  // an aggregation across nodes (count by (id)): shards' answers are summed
};

/// The answers of shards as one: every sample, or for `counts` the values of one label set summed.
PromResult merge_shards(std::vector<PromResult> parts, bool counts) {
  PromResult all = merge_results(std::move(parts));
  if (!counts) return all;
  std::map<std::map<std::string, std::string>, size_t> at;
  std::vector<PromSample> summed;
  for (PromSample& x : all.samples) {
    auto [it, fresh] = at.emplace(x.labels, summed.size());
    if (fresh) summed.push_back(std::move(x));
    else summed[it->second].value += x.value;
  }
  all.samples = std::move(summed);
  return all;
}

class Reader {
 public:
  Reader(const FleetRequest& req, const HttpUrl& url, HttpTransport& http, double now, PromBudget& budget)
      : req_(req), url_(url), http_(http), now_(now), budget_(budget) {}

  /// The asks at once; one the engine refuses for its size (PromLimitError) is asked again for
  /// half of `up`'s nodes at a time, halved again while refused, and the parts merged: the same
  /// answer under Mimir's series limit or VictoriaMetrics' query length (issue 54).  The first
  /// other failure, in the order given, is thrown.
  void round(const std::vector<Ask>& asks, const PromResult& up) {
    std::vector<PromAsk> plain;
    for (const Ask& a : asks) plain.push_back({a.query, a.into});
    std::vector<std::exception_ptr> failed = instant_queries_each(url_, http_, plain, now_, req_.timeout_s, budget_);
    std::vector<std::string> nodes;
    for (const PromSample& x : up.samples)
      if (auto it = x.labels.find("instance"); it != x.labels.end()) nodes.push_back(it->second);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    std::vector<size_t> retry;
    for (size_t i = 0; i < asks.size(); ++i)
      if (failed[i] && asks[i].build && nodes.size() > 1) try {
          std::rethrow_exception(failed[i]);
        } catch (const PromLimitError&) {
          retry.push_back(i);
        } catch (...) {
        }
    each(retry.size(), [&](size_t k) {
      const Ask& a = asks[retry[k]];
      try {
        *a.into = sharded(a, nodes);
        failed[retry[k]] = nullptr;
      } catch (...) {
        failed[retry[k]] = std::current_exception();
      }
    });
    for (const std::exception_ptr& e : failed)
      if (e) std::rethrow_exception(e);
  }

 private:
  PromResult sharded(const Ask& a, const std::vector<std::string>& nodes) {
    const auto mid = nodes.begin() + static_cast<long>(nodes.size() / 2);
    std::vector<std::vector<std::string>> halves = {{nodes.begin(), mid}, {mid, nodes.end()}};
    std::vector<PromResult> parts(2);
    std::vector<std::exception_ptr> failed(2);
    each(2, [&](size_t k) {
      try {
        FleetFilter f = req_.filter;
        f.nodes = halves[k];
        const std::string query = a.build(f);
        try {
          parts[k] = instant_query(url_, http_, query, now_, req_.timeout_s, budget_);
        } catch (const PromLimitError&) {
          if (halves[k].size() < 2) throw;
          parts[k] = sharded(a, halves[k]);
        }
      } catch (...) {
        failed[k] = std::current_exception();
      }
    });
    for (const std::exception_ptr& e : failed)
      if (e) std::rethrow_exception(e);
    return merge_shards(std::move(parts), a.counts);
  }

  /// f(0) ... f(n - 1), on threads of their own when the transport takes several at once.
  void each(size_t n, const std::function<void(size_t)>& f) {
    if (!http_.concurrent() || n < 2) {
      for (size_t i = 0; i < n; ++i) f(i);
      return;
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) threads.emplace_back(f, i);
    for (std::thread& t : threads) t.join();
  }

  const FleetRequest& req_;
  const HttpUrl& url_;
  HttpTransport& http_;
  double now_;
  PromBudget& budget_;
};

}  // namespace

FleetAnswer read_fleet(const FleetRequest& req, HttpTransport& http, double now) {
  HttpUrl url = prometheus_url(req.prometheus);
  FleetQueries q = fleet_queries(req.filter);
  FleetSeries s;
  PromBudget budget;  // every answer of this read together (docs/fleet.md, "Memory")
  Reader reader(req, url, http, now, budget);
  auto field = [](std::string FleetQueries::*m) {
    return [m](const FleetFilter& f) { return fleet_queries(f).*m; };
  };
  std::vector<Ask> asks;
  // Every process, or (auto, with-findings) each GPU's count: at 1 000 nodes listing all 62 720
  // was most of the time (docs/fleet.md, "Scale").  Then auto asks for all of them when the
  // counts say they are few, else the processes the findings name; every query is evaluated at
  // `now`, so the second round sees the same series as the first.
  if (req.processes == FleetProcessList::kAll) {
    asks.push_back({&q.processes, &s.processes, field(&FleetQueries::processes)});
  } else {
    asks.push_back({&q.process_counts, &s.process_counts, field(&FleetQueries::process_counts)});
    s.listed = FleetProcessList::kWithFindings;
  }
  asks.push_back({&q.gauges, &s.gauges, field(&FleetQueries::gauges)});
  asks.push_back({&q.findings, &s.findings, field(&FleetQueries::findings)});
  asks.push_back({&q.up, &s.up, nullptr});  // one series a target: the nodes the others are sharded by
  asks.push_back({&q.last_read, &s.last_read, field(&FleetQueries::last_read)});
  asks.push_back({&q.health, &s.health, field(&FleetQueries::health)});
  asks.push_back({&q.gpus, &s.gpus, field(&FleetQueries::gpus)});
  if (!q.info_counts.empty()) asks.push_back({&q.info_counts, &s.info_counts, field(&FleetQueries::info_counts), true});
  reader.round(asks, s.up);
  // The second round, at once: the processes, and the last read of a down node the hour has none
  // of (a target down for a day says so, one that never exported says "never read").
  // Those built from lists of nodes are split by node sets past req.query_budget_bytes, their
  // parts asked at once and merged.
  std::vector<Ask> second;
  const std::vector<QueryPart> long_reads = long_last_read_queries(unread_down_instances(s), req.query_budget_bytes);
  std::vector<PromResult> long_parts(long_reads.size());
  for (size_t i = 0; i < long_reads.size(); ++i) second.push_back({&long_reads[i].query, &long_parts[i], nullptr});
  std::vector<std::pair<std::string, std::string>> places;
  std::vector<QueryPart> which;
  if (req.processes == FleetProcessList::kAuto && counted_processes(s.process_counts) <= kFleetListLimit) {
    second.push_back({&q.processes, &s.processes, field(&FleetQueries::processes)});
    s.listed = FleetProcessList::kAll;
  } else if (req.processes != FleetProcessList::kAll) {
    // The processes the findings name, by their nodes and pids (the findings were answered).
    places = finding_places(s.findings);
    which = finding_processes_queries(req.filter, places, req.query_budget_bytes);
  }
  std::vector<PromResult> which_parts(which.size());
  for (size_t i = 0; i < which.size(); ++i)
    second.push_back({&which[i].query, &which_parts[i], [&places](const FleetFilter& f) { return finding_processes_query(f, places); }});
  if (!second.empty()) reader.round(second, s.up);
  s.last_read_long = merge_results(std::move(long_parts));
  if (!which.empty()) s.processes = merge_results(std::move(which_parts));
  if (s.listed == FleetProcessList::kWithFindings) keep_places(s.processes, places);
  FleetAnswer a = join_fleet(s, req.filter, now);
  a.prometheus = url.shown();
  for (const PromResult* r :
       {&s.up, &s.last_read, &s.health, &s.gpus, &s.gauges, &s.processes, &s.findings, &s.info_counts, &s.process_counts,
        &s.last_read_long})
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
  if (a.partial) w = Severity::kError;  // part of the fleet unseen: a health check must not pass
  return w;
}

}  // namespace gpumap
