// gpumap which GPU...: what to set to get exactly these physical GPUs, in this order.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/which_view.h"
#include "session/which.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  WhichAnswer a = which_gpus(ctx.session(), env, args.positionals());
  std::cout << render_which(a, ctx.json());
  return kExitOk;
}

}  // namespace

Command which_command() {
  Command c{"which", "what to set to get exactly these physical GPUs, in this order",
          "gpumap which GPU... [--json] [--env NAME=VALUE]... [--unset NAME]...",
          "GPU is an nvidia-smi index, a UUID or a unique prefix of one (MIG device UUIDs too), a PCI\n"
          "bus id in any form (3b:00.0, 0000:3B:00.0, 00000000:3B:00.0), or cuda:N: the GPU that cuda:N\n"
          "is in this environment (said first: `gpumap which cuda:4`).  Prints the CUDA_VISIBLE_DEVICES\n"
          "value that makes them cuda:0, cuda:1, ... in the order given: by UUID (recommended), by index\n"
          "with CUDA_DEVICE_ORDER=PCI_BUS_ID, and the `docker run --gpus` form.  Also says which cuda:N\n"
          "each one is in the current environment, or that it is not visible.  A bad or ambiguous GPU\n"
          "exits 2 and lists the GPUs (inside a container with the host's numbers, in a Slurm step under\n"
          "a device cgroup with Slurm's ids); a GPU outside the Slurm step's (or job's) allocation\n"
          "exits 6, naming it: the advice would put the program on another job's GPU.",
          env_options(), true, run};
  c.positional_value = "GPU";
  return c;
}

}  // namespace gpumap
