// gpumap metrics: one metrics frame in the Prometheus text format, to stdout or atomically to a
// file for node_exporter's textfile collector.
#include <iostream>

#include "cli/command.h"
#include "cli/series_flags.h"
#include "model/error.h"
#include "output/metrics_text.h"
#include "session/metrics.h"

namespace gpumap {

namespace {

int run(const Args& args, Context& ctx) {
  refuse_json(ctx, "gpumap metrics", "`gpumap ps --json` or `gpumap list --json`");
  std::optional<std::string> textfile = args.value("--textfile");
  if (textfile && textfile->empty())
    throw Error(kExitUsage, "--textfile needs a file name", "e.g. --textfile /var/lib/node_exporter/textfile/gpumap.prom");
  SeriesBudget budget = series_budget(args);
  MetricsOnce m = read_metrics_once(ctx.session().driver(), ctx.session().seams(), GPUMAP_VERSION);
  if (m.frame && !m.frame->cuda_known) std::cerr << cuda_unknown_warning(m.frame->cuda_error);
  // A failed read still writes the health series (gpumap_exporter_up 0), so an alert on it
  // fires for the textfile collector as it does for `gpumap serve`; the exit code says it failed.
  std::string text = metrics_text(m.frame ? std::optional<MetricsInput>(metrics_input(*m.frame)) : std::nullopt, m.health, budget);
  if (textfile) {
    try {
      write_metrics_textfile(*textfile, text);
    } catch (const Error& e) {
      throw Error(e.exit_code(), std::string("--textfile ") + e.what(), e.hint());
    }
  } else {
    std::cout << text;
  }
  if (m.failed) throw *m.failed;
  return kExitOk;
}

}  // namespace

Command metrics_command() {
  std::vector<OptionSpec> options = {
      {"--textfile", true, false, "PATH", "write to PATH atomically instead of stdout (node_exporter textfile collector)"}};
  for (OptionSpec& o : series_budget_options()) options.push_back(std::move(o));
  return {"metrics", "GPUs, processes (with their own cuda:N) and findings as Prometheus metrics",
          "gpumap metrics [--textfile PATH] [--process-series all|info|none] [--drop-process-label LABEL]... "
          "[--command-length N] [--max-processes N] [--finding-severity SEVERITY] [--simulate HOST]",
          "Reads the GPUs, their processes (as `gpumap ps` does: each process's own cuda:N, its Slurm job and\n"
          "rank, the lease) and the findings of `ps` and of `doctor` (for a process started with no CUDA\n"
          "variables), and prints them in the Prometheus text format 0.0.4 (docs/metrics.md lists every\n"
          "series).  --textfile PATH writes them atomically (a temporary file renamed over PATH) for\n"
          "node_exporter's textfile collector.  A failed driver read still writes the exporter's health\n"
          "series (gpumap_exporter_up 0) and exits 3 (no driver) or 1.  A CUDA probe that fails or hangs (past\n"
          "GPUMAP_DRIVER_TIMEOUT) is not a failed read: NVML's series are written with gpumap_exporter_cuda_up 0\n"
          "and no cuda_ordinal, with a warning (exit 0).  `gpumap serve` answers the same over HTTP.\n"
          "The series budget (docs/metrics.md): --process-series info or none, --drop-process-label,\n"
          "--command-length and --finding-severity leave series or labels out; --max-processes N keeps the series\n"
          "of N processes (those with a warning or error first, then the most GPU memory) and counts the others\n"
          "(gpumap_exporter_capped_processes).",
          options,
          false,
          run};
}

}  // namespace gpumap
