#include "cli/series_flags.h"

namespace gpumap {

std::vector<OptionSpec> series_budget_options() {
  return {
      {"--process-series", true, false, "all|info|none",
       "series per process: all (default), info (gpumap_process_info and findings), none"},
      {"--drop-process-label", true, true, "LABEL[,LABEL]",
       "leave LABEL out of gpumap_process_info (any but the join keys pid, type, uuid)"},
      {"--command-length", true, false, "N", "cut the command label to N bytes (0 to 128, default 80; 0: none)"},
      {"--max-processes", true, false, "N",
       "series for at most N processes; first dropped: no warning, least GPU memory (counted)"},
      {"--finding-severity", true, false, "info|warning|error", "write findings this severe or worse (default info)"},
  };
}

SeriesBudget series_budget(const Args& args) {
  SeriesFlags f;
  f.process_series = args.value("--process-series");
  f.drop_labels = args.values("--drop-process-label");
  f.command_length = args.value("--command-length");
  f.max_processes = args.value("--max-processes");
  f.finding_severity = args.value("--finding-severity");
  return parse_series_budget(f);
}

}  // namespace gpumap
