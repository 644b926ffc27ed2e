// `gpumap fleet`: every node's GPUs, processes and findings as a Prometheus that scrapes
// `gpumap serve` on each node has them (docs/fleet.md).  A client of Prometheus's HTTP query API,
// not a collector: a handful of instant queries (prom/fleet_join.h), joined into one FleetAnswer.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "answer/fleet_answer.h"
#include "model/finding.h"

namespace gpumap {

class HttpTransport;

constexpr size_t kFleetQueryBudget = 6144;

struct FleetRequest {
  std::string prometheus;        // the URL (--prometheus, else $GPUMAP_PROMETHEUS)
  FleetFilter filter;
  double timeout_s = 10;         // per query: connecting, TLS, sending and reading the answer
  std::string http_config_file;  // promtool's --http.config.file ("" for none)
  FleetProcessList processes = FleetProcessList::kAuto;  // --processes
  /// A query gpumap builds from a list of nodes (the processes the findings name, the down
  /// nodes' last read) is split by node sets so that each part's form (URL-encoded) is at most
  /// this, and the parts' answers merged: a GET fallback's URL and an engine's query-length limit
  /// (VictoriaMetrics' -search.maxQueryLen, 16 KiB) are never passed.
  size_t query_budget_bytes = kFleetQueryBudget;
};

/// Asks the Prometheus at `req.prometheus` through `http`, every query evaluated at `now`
/// (seconds since the epoch).  Error(kExitUsage) for a bad URL or config file; Error(kExitError)
/// naming the URL and the fix when Prometheus cannot be reached, refuses (HTTP 401/403, a query
/// error), answers something that is not its query API, or does not answer within timeout_s.
FleetAnswer read_fleet(const FleetRequest& req, HttpTransport& http, double now);
/// The same over real sockets (TLS and credentials from http_config_file), at the system clock's now.
FleetAnswer read_fleet(const FleetRequest& req);

/// --processes's value (auto, all, with-findings); Error(kExitUsage) naming anything else.
FleetProcessList parse_fleet_processes(const std::string& text);
/// --timeout's seconds: Error(kExitUsage) for anything but a number above 0 and at most 3600.
double parse_fleet_timeout(const std::string& text);
/// --fail-on's severity (warning or error); Error(kExitUsage) naming anything else.
std::optional<Severity> parse_fleet_fail_on(const std::optional<std::string>& value);
/// The worst of the answer: its findings' severities, and kError for a node that is down (a
/// health check must not pass because a node stopped reporting), and for a partial answer (a
/// store or shard did not answer: part of the fleet unseen); kInfo for none.
Severity fleet_worst(const FleetAnswer& a);

}  // namespace gpumap
