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

/// What a Prometheus holding `s` answers to `query` when it is one of `q`'s (nullopt for any
/// other): the stored answer, or for the two derived queries what PromQL makes of s.processes
/// and s.findings (each GPU's pids counted by Slurm job; the processes with a warning or error
/// finding on their node).
std::optional<PromResult> answer_fleet_query(const FleetSeries& s, const FleetQueries& q, const std::string& query);

/// `r` as the body of a `/api/v1/query` answer.
std::string prom_body(const PromResult& r);

}  // namespace gpumap::testing
