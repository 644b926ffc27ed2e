// gpumap explain: entry by entry, what CUDA, the container runtime and the launcher do
// with the variables in force, in plain words, with the consequence.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/explain_view.h"
#include "session/explain.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  Explanation e = explain(ctx.session(), env, args.has("--probe"));
  std::cout << render_explain(e, ctx.json());
  return kExitOk;
}

}  // namespace

Command explain_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back(probe_option());
  return {"explain", "explain, entry by entry, what CUDA and the launchers do with the variables",
          "gpumap explain [--json] [--env NAME=VALUE]... [--unset NAME]... [--probe]",
          "Reads CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES (entry by entry, the way the driver reads\n"
          "it), NVIDIA_VISIBLE_DEVICES (the container runtime's variable) and the launcher variables\n"
          "(LOCAL_RANK, SLURM_*, ...) and says in plain words what each does and what follows from it,\n"
          "then the resulting cuda:N -> GPU mapping and the findings.",
          opts, false, run};
}

}  // namespace gpumap
