// The fleet view's queries and their join: which instant queries `gpumap fleet` asks Prometheus
// (the filters as label matchers, so a filtered node costs one node's series), and the pure join
// of their answers into one FleetAnswer on (instance, uuid, pid).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "answer/fleet_answer.h"
#include "prom/query_result.h"

namespace gpumap {

/// The PromQL of each query, for `filter`.
struct FleetQueries {
  /// `up` of every target of gpumap's scrape jobs: the jobs with a target that exported
  /// gpumap_build_info in the last hour, each of their targets whether it ever exported or not.
  std::string up;
  std::string last_read;  // each target's gpumap_exporter_last_success_timestamp_seconds, last sample within the hour
  std::string health;     // gpumap_exporter_up, gpumap_exporter_stale and gpumap_build_info (the node exports gpumap's series)
  std::string gpus;       // gpumap_gpu_info (--gpu-model: its name)
  std::string gauges;     // memory used/total, utilisation, temperature
  std::string processes;  // gpumap_process_info (--job, --user; --gpu-model through its GPU)
  std::string findings;   // gpumap_finding (without -v: not the info ones)
  std::string info_counts;  // without -v: count by (id) of the info ones ("" with -v)
  /// Each GPU's processes counted by Slurm job (one per pid, whatever its `type`s): the counts
  /// of a view that does not list every process.
  std::string process_counts;
};
FleetQueries fleet_queries(const FleetFilter& filter);

/// What Prometheus answered to each query.
struct FleetSeries {
  PromResult up, last_read, health, gpus, gauges, processes, findings, info_counts, process_counts;
  /// The last read of the down nodes last_read has none for, over kFleetLongLookbackDays (second round).
  PromResult last_read_long;
  /// What `processes` holds: kAll every process (`process_counts` may be empty: counted from
  /// them), kWithFindings those of finding_processes_query (the counts from `process_counts`).
  FleetProcessList listed = FleetProcessList::kAll;
};
/// (instance, pid) of every warning or error finding of a process in `findings`, sorted, once each.
std::vector<std::pair<std::string, std::string>> finding_places(const PromResult& findings);
/// gpumap_process_info of the processes at `places` (the filters applied): up to
/// kExactFindingPlaces by their nodes and pids (index lookups; keep_places then drops a pid of
/// one node found on another), past that `and on(instance, pid)` the findings (which scans every
/// process).  "" for no places.
constexpr size_t kExactFindingPlaces = 1000;
std::string finding_processes_query(const FleetFilter& filter, const std::vector<std::pair<std::string, std::string>>& places);
/// The same split by node sets so that each query's form (URL-encoded) fits `budget_bytes`: the
/// places of each set of nodes in one query; the answers together are the unsplit one's.
struct QueryPart {
  std::string query;
  std::vector<std::string> instances;  // the node set it asks for (all: empty)
};
std::vector<QueryPart> finding_processes_queries(const FleetFilter& filter,
                                                 const std::vector<std::pair<std::string, std::string>>& places,
                                                 size_t budget_bytes);
/// Leaves in `processes` only the series at `places`.
void keep_places(PromResult& processes, const std::vector<std::pair<std::string, std::string>>& places);
/// The instances of `up` that are down (`up == 0` or in `up` with no series in `health`) and
/// have no sample in `last_read`: those whose last read is looked for over kFleetLongLookbackDays.
std::vector<std::string> unread_down_instances(const FleetSeries& series);
/// `last_read` over kFleetLongLookbackDays for `instances` ("" for none).
std::string long_last_read_query(const std::vector<std::string>& instances);
/// The same split by node sets, each query's form within `budget_bytes` (none for no instances).
std::vector<QueryPart> long_last_read_queries(const std::vector<std::string>& instances, size_t budget_bytes);

/// `values` in consecutive sets, each as large as lets `build(set)` fit `budget_bytes` once
/// URL-encoded (halved until it does; a value that alone does not fit is a set of its own): one
/// set when all fit.  How a query past the size budget is split (by node sets).
std::vector<std::vector<std::string>> split_for_budget(
    const std::vector<std::string>& values, size_t budget_bytes,
    const std::function<std::string(const std::vector<std::string>&)>& build);
/// The answers of a split query as one: every part's samples and warnings, partial if any was.
PromResult merge_results(std::vector<PromResult> parts);

/// The GPU processes `process_counts` answered, summed.
long long counted_processes(const PromResult& process_counts);

/// The join: nodes from `up` (and any instance a series names), GPUs from gpu_info and the gauges,
/// processes onto their GPUs, findings onto their processes or nodes, grouped by cause and by Slurm
/// job across nodes.  The filters are applied again here, so the answer never holds what they
/// exclude whatever the server did with the matchers; with --job, --user or --gpu-model a node is
/// kept when something of it matched or when it is down (it may hold what was asked: never left
/// out silently).  `evaluated_at`: the queries' evaluation time, for the last read's age.
FleetAnswer join_fleet(const FleetSeries& series, const FleetFilter& filter, double evaluated_at);

/// An instance's node name: the instance without its `:port` (and an IPv6 address without brackets).
std::string node_of_instance(const std::string& instance);

}  // namespace gpumap
