// The Prometheus text exposition format, version 0.0.4 (`# HELP`, `# TYPE`, one sample a line),
// for `gpumap metrics` and `gpumap serve`: the generic writer, and the gpumap series built from a
// metrics frame's parts (docs/metrics.md lists every series).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "answer/metrics_answer.h"
#include "model/finding.h"
#include "model/snapshot.h"
#include "model/lease.h"
#include "output/series_budget.h"
#include "resolve/process_view.h"

namespace gpumap {

/// What the exposition is served as.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

using MetricLabels = std::vector<std::pair<const char*, std::string>>;

/// One metric family written as it is built: its HELP and TYPE lines once, then samples.
/// A label whose value is empty is left out (Prometheus reads an empty label as no label).
class Exposition {
 public:
  /// Starts a family: `type` is "gauge" or "counter"; `help` is escaped as the format says.
  void family(const char* name, const char* type, const std::string& help);
  /// A sample of the current family.  NaN and infinities are never written (a value gpumap does
  /// not know is no sample, not NaN).
  void sample(const MetricLabels& labels, double value);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
  std::string name_;
  std::string pending_;  // the current family's HELP and TYPE, until its first sample
};

/// A label value as the format writes it between quotes: `\` -> `\\`, `"` -> `\"`, newline -> `\n`.
std::string escape_label_value(std::string_view v);
/// A HELP text: `\` -> `\\`, newline -> `\n`.
std::string escape_help(std::string_view v);

/// The longest label value written (bytes, before escaping): a value from outside (an
/// environment's SLURM_JOB_ID, a command line) longer than this is cut, ending in "…", so one
/// process cannot make every scrape large.
inline constexpr size_t kMaxLabelValueBytes = 128;
/// A command line as a label: control characters and malformed UTF-8 as `?`, cut to `max_bytes`
/// (at a character boundary, with "…").
std::string short_command(std::string_view command, size_t max_bytes = 80);

/// What a frame's series were: its processes (NVML pids) and how many of them the budget's
/// --max-processes left out.
struct FrameSeries {
  size_t processes = 0;
  size_t dropped_processes = 0;
};

/// The GPU, MIG device, process, lease and finding series of a frame, within `budget`: the tables
/// of families in metrics_text.cc (name, type, help, labels, value), one row per family.
FrameSeries add_frame_metrics(Exposition& out, const MetricsInput& in, const SeriesBudget& budget = {});

/// The processes (NVML pids) a frame keeps under a cap of `max`: those with a warning or error
/// finding first, then the most GPU memory (summed over its GPUs; unknown counts as 0), then the
/// lowest pid.  The set depends on those values only, not on the order NVML lists processes in,
/// so the same processes get the same set at every scrape; the others are dropped, smallest GPU
/// memory first.
std::vector<uint32_t> kept_processes(const PsResult& ps, size_t max);

/// A label of gpumap_process_info.  The join keys (pid, type, uuid) are on every process series
/// and stay; the others may be dropped (--drop-process-label).
struct ProcessLabelDoc {
  const char* name;
  bool join_key;
};
std::vector<ProcessLabelDoc> process_info_labels();

/// The exporter's own health series (answer/metrics_answer.h's ExporterHealth).
void add_health_metrics(Exposition& out, const ExporterHealth& h);

/// A family gpumap writes: its name, type and HELP text.
struct MetricFamilyDoc {
  const char* name;
  const char* type;
  const char* help;
};
/// Every family, in the order they are written (the frame's, then the health series):
/// docs/metrics.md lists each (checked by metrics_text_test.cc).
std::vector<MetricFamilyDoc> metric_families();

/// `gpumap metrics`' whole text: the frame's series within `budget` (none without a frame: the
/// read failed), then the health series (with --max-processes, the processes it left out).
std::string metrics_text(const std::optional<MetricsInput>& frame, ExporterHealth h, const SeriesBudget& budget = {});
/// The warning `gpumap metrics` prints when CUDA's view is unknown (NVML's data is written
/// without CUDA's, exit 0: the health series say so to alerts).
std::string cuda_unknown_warning(const std::string& cuda_error);

}  // namespace gpumap
