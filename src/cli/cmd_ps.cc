// gpumap ps: who is on which GPU, and what each process calls that GPU (its own cuda:N).
#include <iostream>

#include "cli/command.h"
#include "cli/command_help.h"
#include "model/error.h"
#include "output/style.h"
#include "output/ps_view.h"
#include "output/query_csv.h"
#include "output/render.h"
#include "session/ps.h"

namespace gpumap {
namespace {

/// The filters asked for: Error(kExitUsage) naming a bad value.
PsFilter ps_filter(const Args& args, Context& ctx) {
  PsFilter f{args.values("--user"), {}, {}, args.values("--job")};
  for (const std::string& v : args.values("--gpu"))
    for (const std::string& g : split_gpu_specs(v)) f.gpus.push_back(g);
  f.pids = parse_ps_pids(args.values("--pid"));
  // The session's first snapshot is the one every later read gets: read it as a ps frame does
  // (with each process's utilisation), or --query's utilization.sm and --json's sm_utilization
  // stay unknown while top and metrics show them (issue 43).
  check_ps_filter(ctx.session().snapshot(ps_read_options()), f);
  return f;
}

int run(const Args& args, Context& ctx) {
  PsFilter filter = ps_filter(args, ctx);
  std::optional<Severity> fail_on = parse_fail_on(args.value("--fail-on"));
  if (fail_on && args.has("--watch"))
    throw Error(kExitUsage, "ps: --fail-on checks one reading, --watch never ends", "drop --watch for a health check");
  PsFrame last;
  KubeletCache kubelets;  // one answer across --watch frames while the pods stay the same
  auto one_frame = [&](Context& c, bool one_line) {  // a JSON document (one line when `one_line`) or the table
    last = read_ps_frame(c.session(), filter, &kubelets);
    return render_ps_frame(c.session().snapshot(), last, c.json(), one_line,
                           {args.has("--all"), filter.pids.size() == 1});
  };
  std::optional<std::vector<std::string>> fields;
  if (csv_query_asked(args, ctx, "--query", "gpumap ps --query=pid,gpu_uuid,cuda_ordinal --format=csv"))
    fields = parse_query_fields(QueryKind::kProcess, *args.value("--query"), "--query");
  CsvFormat fmt = parse_csv_format(args.value("--format").value_or("csv"));
  auto frame = [&](Context& c, bool one_line) {
    if (!fields) return one_frame(c, one_line);
    last = read_ps_frame(c.session(), filter, &kubelets);
    return render_process_csv(c.session().snapshot(), last.result, last.leases, *fields, fmt);
  };
  if (std::optional<double> w = watch_seconds(args))
    return watch_frames(*w, ctx, [&](Context& c) { return frame(c, true); });
  std::cout << frame(ctx, false);
  return fail_on && ps_worst(last.result) >= *fail_on ? kExitFindings : kExitOk;
}

std::vector<OptionSpec> ps_options() {
  std::vector<OptionSpec> o = query_options("--query");
  o.insert(o.begin(),
           {{"--user", true, true, "USER", "only this user's processes (a name or a numeric UID)"},
            {"--gpu", true, true, "GPU", "only this GPU's (nvidia-smi index, UUID or prefix, PCI bus id)"},
            {"--pid", true, true, "PID[,PID...]", "only these processes (NVML's PID or this namespace's)"},
            {"--job", true, true, "JOBID", "only this Slurm job's processes (their SLURM_JOB_ID)"},
            {"--all", false, false, "", "show info findings too (the text hides them by default)", {"-v"}},
            {"--fail-on", true, false, "warning|error", "exit 7 when a finding this severe or worse is shown"}});
  return o;
}

}  // namespace

Command ps_command() {
  return {"ps", "who is on which GPU, and which cuda:N each process calls it",
          "gpumap ps [--user U] [--gpu GPU] [--pid N] [--job ID] [-v|--all] [--fail-on warning|error]\n"
          "          [--json | --query=FIELDS [--format=csv[,noheader][,nounits]]] [--watch SECONDS]",
          command_description("ps"),
          ps_options(),
          false,
          run};
}

}  // namespace gpumap
