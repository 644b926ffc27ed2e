// The series budget: how much of a frame `gpumap metrics` and `gpumap serve` write, as the
// operator sets it with their flags (docs/metrics.md, "The series budget").  The default is
// the whole frame; each setting leaves out per-process series, which are what grows with a
// node's processes and what a restarted job renews.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.h"

namespace gpumap {

/// Which series a process on a GPU gets (--process-series).
enum class ProcessSeries {
  kAll,   // gpumap_process_info, the process value series and its findings (default)
  kInfo,  // gpumap_process_info and its findings; no value series (memory, utilisation)
  kNone,  // no series with a pid label at all; the GPUs' series and the host's findings stay
};

/// The command label's default length, in bytes.
inline constexpr size_t kDefaultCommandBytes = 80;
/// The most --max-processes takes.
inline constexpr size_t kMaxProcessesLimit = 1000000;

struct SeriesBudget {
  ProcessSeries process_series = ProcessSeries::kAll;
  /// Optional labels of gpumap_process_info left out (process_info_labels(): never a join key).
  std::vector<std::string> dropped_labels;
  /// The command label cut to this many bytes (at a character boundary, ending in "…"); 0: no
  /// command label.
  size_t command_bytes = kDefaultCommandBytes;
  /// At most this many processes (NVML pids) get series; the others are dropped, in a stable
  /// order (metrics_text.h, kept_processes) and counted.  nullopt: no cap.
  std::optional<size_t> max_processes;
  /// Findings less severe than this are not written, the host's and the processes' alike.
  Severity min_severity = Severity::kInfo;
};

/// The budget's flags as given on the command line (nullopt, empty: not given).
struct SeriesFlags {
  std::optional<std::string> process_series;    // --process-series all|info|none
  std::vector<std::string> drop_labels;         // --drop-process-label LABEL[,LABEL...], repeatable
  std::optional<std::string> command_length;    // --command-length N (0 to kMaxLabelValueBytes)
  std::optional<std::string> max_processes;     // --max-processes N (0 to kMaxProcessesLimit)
  std::optional<std::string> finding_severity;  // --finding-severity info|warning|error
};

/// The budget the flags ask for.  Error(kExitUsage) naming the flag, the value and what it
/// takes: an unknown word, a number out of range, a label gpumap_process_info does not have or
/// one of its join keys (pid, type, uuid), or --command-length with the command label dropped.
SeriesBudget parse_series_budget(const SeriesFlags& flags);

}  // namespace gpumap
