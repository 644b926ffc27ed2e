#include "session/fleet.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "findings/fail_on.h"
#include "model/error.h"
#include "model/text.h"
#include "prom/fleet_join.h"
#include "prom/http_client.h"
#include "prom/http_config.h"
#include "prom/query_result.h"

namespace gpumap {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

/// One instant query; Error naming the URL and the fix for every way it can fail.
PromResult ask(const HttpUrl& url, HttpTransport& http, const std::string& query, double now, double timeout_s) {
  char when[32];
  std::snprintf(when, sizeof when, "%.3f", now);
  std::string target = "/api/v1/query?query=" + url_encode(query) + "&time=" + when + "&timeout=" +
                       url_encode(seconds_text(timeout_s));  // seconds (the API takes a float)
  const std::string where = "Prometheus at " + url.shown();
  HttpAnswer r;
  try {
    r = http.get(url, target, timeout_s);
  } catch (const HttpError& e) {
    switch (e.kind()) {
      case HttpFailure::kRefused:
        throw Error(kExitError, where + " refused the connection (nothing listens there)",
                    "is Prometheus running? check --prometheus or $GPUMAP_PROMETHEUS (its web port, 9090 by default)");
      case HttpFailure::kResolve:
        throw Error(kExitError, where + ": " + e.what(), "check the host name in --prometheus or $GPUMAP_PROMETHEUS");
      case HttpFailure::kTimeout:
        throw Error(kExitError, where + " did not answer within " + seconds_text(timeout_s) + " s: " + e.what(),
                    "check that the URL is Prometheus's and that it is up; a slow server needs a larger --timeout "
                    "(or narrow the query with --node)");
      case HttpFailure::kTls:
        throw Error(kExitError, where + ": " + e.what(),
                    "give its CA in --http.config.file (tls_config: {ca_file: FILE}); an https URL needs a server that speaks TLS");
      case HttpFailure::kProtocol:
        throw Error(kExitError, where + " did not answer as an HTTP server: " + e.what(),
                    "check the URL's scheme and port: it must be Prometheus's web address (http://HOST:9090)");
      case HttpFailure::kUnreachable:
        break;
    }
    throw Error(kExitError, where + " cannot be reached: " + e.what(), "check the address and the network between here and it");
  }
  if (r.status == 401 || r.status == 403)
    throw Error(kExitError, where + " refused the query: HTTP " + std::to_string(r.status) + " " + r.reason,
                "give credentials in --http.config.file (basic_auth with password_file, or authorization with "
                "credentials_file; docs/fleet.md), never on the command line");
  PromResult res;
  try {
    res = parse_prom_query(r.body);
  } catch (const PromError& e) {
    if (e.error_type() == "bad_answer") {
      if (r.status == 404)
        throw Error(kExitError, where + " has no query API (HTTP 404 for /api/v1/query)",
                    "give Prometheus's base URL (http://HOST:9090), with its path prefix when it is behind a proxy");
      throw Error(kExitError, where + " answered HTTP " + std::to_string(r.status) + " with something other than a query answer (" +
                                  e.what() + ")",
                  "check that the URL is Prometheus's (or Thanos's, Mimir's, VictoriaMetrics') query API");
    }
    std::string hint = e.error_type() == "timeout" || e.error_type() == "execution" || e.error_type() == "unavailable"
                           ? "narrow the query with --node, or raise the server's --query.timeout / --query.max-samples"
                           : "this query is gpumap's: please report it with the message";
    throw Error(kExitError, where + " refused the query (" + e.error_type() + ": " + e.what() + "): " + query, hint);
  }
  if (r.status / 100 != 2)
    throw Error(kExitError, where + " answered HTTP " + std::to_string(r.status) + " " + r.reason, "check the URL and the server's log");
  return res;
}

HttpUrl checked_url(const std::string& text) {
  if (text.empty())
    throw Error(kExitUsage, "fleet: no Prometheus to ask", "give --prometheus http://HOST:9090 or set $GPUMAP_PROMETHEUS");
  std::string why;
  std::optional<HttpUrl> url = parse_http_url(text, &why);
  if (!url)
    throw Error(kExitUsage, "--prometheus `" + printable(text) + "`: " + why,
                "give Prometheus's base URL, e.g. --prometheus http://prometheus:9090");
  return *url;
}

/// The queries of one round, each into its answer: all at once when the transport can (largest
/// first: Prometheus answers them on its cores while gpumap parses those already answered; one
/// after another was Prometheus's time plus gpumap's at 1 000 nodes, docs/fleet.md "Scale").
/// The first failure, in the order given, is the one said.
void ask_all(const HttpUrl& url, HttpTransport& http, const std::vector<std::pair<const std::string*, PromResult*>>& asks,
             double now, double timeout_s) {
  if (!http.concurrent()) {
    for (auto [query, into] : asks) *into = ask(url, http, *query, now, timeout_s);
    return;
  }
  std::vector<std::exception_ptr> failed(asks.size());
  std::vector<std::thread> threads;
  threads.reserve(asks.size());
  for (size_t i = 0; i < asks.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        *asks[i].second = ask(url, http, *asks[i].first, now, timeout_s);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace

FleetAnswer read_fleet(const FleetRequest& req, HttpTransport& http, double now) {
  HttpUrl url = checked_url(req.prometheus);
  FleetQueries q = fleet_queries(req.filter);
  FleetSeries s;
  std::vector<std::pair<const std::string*, PromResult*>> asks;
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
  ask_all(url, http, asks, now, req.timeout_s);
  if (req.processes == FleetProcessList::kAuto && counted_processes(s.process_counts) <= kFleetListLimit) {
    ask_all(url, http, {{&q.processes, &s.processes}}, now, req.timeout_s);
    s.listed = FleetProcessList::kAll;
  } else if (req.processes != FleetProcessList::kAll) {
    // The processes the findings name, by their nodes and pids (the findings were answered).
    std::vector<std::pair<std::string, std::string>> places = finding_places(s.findings);
    std::string which = finding_processes_query(req.filter, places);
    if (!which.empty()) ask_all(url, http, {{&which, &s.processes}}, now, req.timeout_s);
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
  checked_url(req.prometheus);  // a bad URL before the config file
  HttpAuth auth = req.http_config_file.empty() ? HttpAuth{} : load_http_config(req.http_config_file);
  std::unique_ptr<HttpTransport> http = socket_transport(auth);
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
