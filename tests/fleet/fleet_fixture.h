// A fleet as Prometheus answers for it (three nodes; one down; a Slurm job of four ranks on two
// nodes; a pod; findings on processes and on a node), as the series of each fleet query, and as
// the JSON bodies Prometheus would send: for the join's and the session's tests.
#pragma once
#include <map>
#include <string>

#include "prom/fleet_join.h"

namespace gpumap::testing {

/// The evaluation time of every sample.
inline constexpr double kFleetNow = 1796553056.0;

/// The three-node fleet's series.
FleetSeries three_node_fleet();

/// `r` as the body of a `/api/v1/query` answer.
std::string prom_body(const PromResult& r);

}  // namespace gpumap::testing
