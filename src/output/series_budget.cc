#include "output/series_budget.h"

#include <algorithm>

#include "model/error.h"
#include "model/text.h"
#include "output/metrics_text.h"

namespace gpumap {
namespace {

/// A whole number from `lo` to `hi`, digits only; Error(kExitUsage) naming `flag` otherwise.
size_t count_value(const char* flag, const std::string& v, size_t lo, size_t hi, const char* meaning) {
  bool digits = !v.empty() && v.size() <= 9 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  size_t n = digits ? std::stoul(v) : 0;
  if (!digits || n < lo || n > hi)
    throw Error(kExitUsage,
                std::string(flag) + " takes a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                    ", not `" + printable(v) + "`",
                std::string("e.g. ") + flag + " " + meaning);
  return n;
}

std::string optional_labels() {
  std::string out;
  for (const ProcessLabelDoc& l : process_info_labels())
    if (!l.join_key) out += (out.empty() ? "" : ", ") + std::string(l.name);
  return out;
}

void drop_label(SeriesBudget& b, const std::string& name) {
  const char* flag = "--drop-process-label";
  for (const ProcessLabelDoc& l : process_info_labels()) {
    if (name != l.name) continue;
    if (l.join_key)
      throw Error(kExitUsage,
                  std::string(flag) + " " + name + ": " + name +
                      " is a join key of every process series (pid, type, uuid) and cannot be dropped",
                  "drop one of " + optional_labels() + ", or --process-series none for no process series");
    if (std::find(b.dropped_labels.begin(), b.dropped_labels.end(), name) == b.dropped_labels.end())
      b.dropped_labels.push_back(name);
    return;
  }
  throw Error(kExitUsage, std::string(flag) + ": `" + printable(name) + "` is not a label of gpumap_process_info",
              "the labels that may be dropped: " + optional_labels());
}

}  // namespace

SeriesBudget parse_series_budget(const SeriesFlags& flags) {
  SeriesBudget b;
  if (const std::optional<std::string>& v = flags.process_series) {
    if (*v == "all") b.process_series = ProcessSeries::kAll;
    else if (*v == "info") b.process_series = ProcessSeries::kInfo;
    else if (*v == "none") b.process_series = ProcessSeries::kNone;
    else
      throw Error(kExitUsage, "--process-series takes all, info or none, not `" + printable(*v) + "`",
                  "all: every process series (default); info: only gpumap_process_info and the findings; none: no "
                  "series per process");
  }
  for (const std::string& list : flags.drop_labels) {
    size_t start = 0;
    for (;;) {
      size_t comma = list.find(',', start);
      std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (name.empty())
        throw Error(kExitUsage, "--drop-process-label needs label names, separated by commas, not `" + printable(list) + "`",
                    "e.g. --drop-process-label command,user");
      drop_label(b, name);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (flags.command_length) {
    b.command_bytes = count_value("--command-length", *flags.command_length, 0, kMaxLabelValueBytes, "40 (0: no command label)");
    if (std::find(b.dropped_labels.begin(), b.dropped_labels.end(), "command") != b.dropped_labels.end())
      throw Error(kExitUsage, "--command-length is given, and --drop-process-label drops the command label",
                  "give one of them: --command-length 0 also leaves the command label out");
  }
  if (std::find(b.dropped_labels.begin(), b.dropped_labels.end(), "command") != b.dropped_labels.end()) b.command_bytes = 0;
  if (b.command_bytes == 0 && std::find(b.dropped_labels.begin(), b.dropped_labels.end(), "command") == b.dropped_labels.end())
    b.dropped_labels.push_back("command");
  if (flags.max_processes)
    b.max_processes = count_value("--max-processes", *flags.max_processes, 0, kMaxProcessesLimit, "200");
  if (const std::optional<std::string>& v = flags.finding_severity) {
    if (*v == "info") b.min_severity = Severity::kInfo;
    else if (*v == "warning") b.min_severity = Severity::kWarning;
    else if (*v == "error") b.min_severity = Severity::kError;
    else
      throw Error(kExitUsage, "--finding-severity takes info, warning or error, not `" + printable(*v) + "`",
                  "findings less severe than it are not written; e.g. --finding-severity warning leaves out the info ones");
  }
  return b;
}

}  // namespace gpumap
