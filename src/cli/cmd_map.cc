// gpumap map (the default command): cuda:N -> physical GPU for an environment.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/map_view.h"
#include "session/map.h"
#include "session/map_batch.h"

namespace gpumap {
namespace {

// map --batch FILE: one prediction per line of FILE, one output line each, written as predicted.
int run_batch(const Args& args, Context& ctx, const Environment& env) {
  MapBatchAnswer a = answer_map_batch(ctx.session(), env,
                                      {.file = *args.value("--batch"), .probe = args.has("--probe"), .check = args.has("--check"),
                                       .line = args.has("--line"), .asked = args.positionals()},
                                      std::cin);
  write_map_batch(std::cout, ctx.session().snapshot(), a, ctx.json());
  return kExitOk;
}

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  if (args.has("--batch")) return run_batch(args, ctx, env);
  if (args.has("--line") && ctx.json())
    throw Error(kExitUsage, "map: --line and --json together: --line is one line of text for logs",
                "use --json for the document, or --line for the log line");
  MapAnswer a = answer_map(ctx.session(), env, {.probe = args.has("--probe"), .check = args.has("--check"),
                                                .asked = args.positionals()});
  MapFormat format = args.has("--line") ? MapFormat::kLine : ctx.json() ? MapFormat::kJson : MapFormat::kText;
  std::cout << render_map(ctx.session().snapshot(), a, format);
  // The log line is for a log, never a verdict (the TaskProlog prints it and goes on).
  return format == MapFormat::kLine ? kExitOk : a.exit_code();
}

}  // namespace

Command map_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back(probe_option());
  opts.push_back(watch_option());
  opts.push_back({"--check", false, false, "", "predict and ask the driver; exit 4 if they disagree"});
  opts.push_back({"--batch", true, false, "FILE",
                  "predict for each line of FILE (JSON: {\"CUDA_VISIBLE_DEVICES\": ..., \"CUDA_DEVICE_ORDER\": ...}; - for stdin), "
                  "one answer per line"});
  opts.push_back({"--line", false, false, "",
                  "one line: rank and node (Slurm), cuda:N -> nvidia-smi index and UUID, warnings/errors (for logs)"});
  return {"map", "which physical GPU each cuda:N is, for this environment (the default)",
          "gpumap [map] [cuda:N]... [--json | --line] [--env NAME=VALUE]... [--unset NAME]...\n"
          "      [--probe | --check | --batch FILE] [--watch SECONDS]",
          "Shows, for this process's environment (or the one given with --env/--unset), which physical GPU\n"
          "each cuda:N is: the nvidia-smi index, UUID, PCI bus id and name; the GPUs it cannot see; the\n"
          "variables in force; and every trap found.  When CUDA would fail to initialise it says which\n"
          "error and why.  The view is predicted from NVML without cuInit wherever that is exact; on\n"
          "mixed-model or MIG hosts the driver's order is asked once per boot and cached.  With cuda:N\n"
          "(`gpumap map cuda:4`, or `gpumap cuda:4`) it first says which GPU that cuda:N is here; exit 2\n"
          "when it does not exist.  With --batch FILE it predicts, in one process, for each line of FILE\n"
          "(a JSON object setting CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER: a string, null for unset,\n"
          "NAME_hex for bytes that are not UTF-8), one line of output each (--json: one document per line).\n"
          "--watch SECONDS refreshes until Ctrl-C (JSON: one document per line).",
          opts, true, [](const Args& a, Context& c) { return run_watchable(a, c, run); }};
}

}  // namespace gpumap
