// A fleet as Prometheus answers for it (three nodes; one down; a Slurm job of four ranks on two
// nodes; a pod; findings on processes and on a node), as the series of each fleet query, and as
// the JSON bodies Prometheus would send: for the join's and the session's tests.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "prom/fleet_join.h"

namespace gpumap::testing {

/// The evaluation time of every sample.
inline constexpr double kFleetNow = 1796553056.0;

/// The three-node fleet's series.
FleetSeries three_node_fleet();

/// The three-node fleet and two more targets of its scrape job: node-d:9467 never came up
/// (`up` 0, no gpumap series ever), node-e:9467 answers its scrapes with none of gpumap's series
/// (`up` 1); and node-c's last read, had the hour none, 3 days old (last_read_long).
FleetSeries fleet_with_unread_targets();

/// What a Prometheus holding `s` answers to `query` when it is one `gpumap fleet` asks with
/// `filter` (nullopt for any other): the stored answer, or for the derived queries what PromQL
/// makes of s.processes and s.findings (each GPU's pids counted by Slurm job; the processes the
/// warning and error findings name).  Like the fakes built on it, it applies no filter itself.
/// `budget`: the query budget the parts of a split query were made with (FleetRequest's).
std::optional<PromResult> answer_fleet_query(const FleetSeries& s, const FleetFilter& filter, const std::string& query,
                                             size_t budget = 6144);

/// The query of a `/api/v1/query?query=...&...` target, URL-decoded.
std::string query_of(const std::string& target);

/// `r` as the body of a `/api/v1/query` answer.
std::string prom_body(const PromResult& r);

}  // namespace gpumap::testing
