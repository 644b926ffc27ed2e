// The series budget's flags, shared by `gpumap metrics` and `gpumap serve` (docs/metrics.md,
// "The series budget"): declared once, parsed once into output/series_budget.h's SeriesBudget.
#pragma once
#include <vector>

#include "cli/args.h"
#include "output/series_budget.h"

namespace gpumap {

/// --process-series, --drop-process-label, --command-length, --max-processes, --finding-severity.
std::vector<OptionSpec> series_budget_options();
/// Their values; Error(kExitUsage) naming the flag for a bad one (parse_series_budget).
SeriesBudget series_budget(const Args& args);

}  // namespace gpumap
