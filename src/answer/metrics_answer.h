// What `gpumap metrics` and `gpumap serve` render (output/metrics_text.h) from a metrics frame
// (session/metrics.h computes it): the frame's parts the series come from, and the exporter's own
// health.  Plain structs, so session/ fills them and output/ writes them without either including
// the other.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.h"
#include "model/lease.h"
#include "model/snapshot.h"
#include "resolve/process_view.h"

namespace gpumap {

/// The parts of one metrics frame (session/metrics.h's MetricsFrame) the series come from.
struct MetricsInput {
  const Snapshot& snapshot;
  const PsResult& ps;
  const std::map<std::string, std::optional<LeaseState>>& leases;  // by UUID; absent or nullopt: unknown
  const std::vector<Finding>& host_findings;
  std::string host = {};  // the host's name, as `ps` says it (PsFrame::host): gpumap_host_info
};

/// The exporter's own health.
struct ExporterHealth {
  bool up = false;                          // the last driver read succeeded
  bool stale = false;                       // the frame served is older than the last read attempt
  std::optional<double> read_seconds;       // how long the served frame's read took
  std::optional<double> last_success_unix;  // when the last good read ended
  /// Whether the served frame knows CUDA's view (MetricsFrame::cuda_known); nullopt: no frame.
  std::optional<bool> cuda_up;
  uint64_t driver_errors = 0;       // failed or timed-out reads so far
  std::optional<uint64_t> scrapes;  // serve: /metrics requests answered so far
  /// With --max-processes: the processes the served frame left out, and (serve) those left out
  /// of every frame read so far.
  std::optional<uint64_t> capped_processes;
  std::optional<uint64_t> dropped_processes_total;
  std::string version;  // gpumap's version
};

}  // namespace gpumap
