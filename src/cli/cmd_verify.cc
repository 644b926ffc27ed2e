// gpumap verify --expect GPU[,GPU...]: exit 0 when cuda:0.. are exactly those GPUs.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/verify_view.h"
#include "session/verify.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  std::vector<std::string> specs = args.values("--expect");
  if (auto snap = args.value("--snapshot")) {
    for (const char* other : {"--expect", "--prefix", "--probe", "--env", "--unset"})
      if (args.has(other))
        throw Error(kExitUsage, std::string("verify: --snapshot checks the whole host's numbering; ") + other +
                                    " belongs to --expect",
                    "run `gpumap verify --snapshot FILE` and `gpumap verify --expect GPU,...` one after the other");
    if (snap->empty()) throw Error(kExitUsage, "verify: --snapshot needs a file", "e.g. gpumap verify --snapshot /var/lib/gpumap/snapshot.json");
    return snapshot_check(ctx, *snap, false);
  }
  if (specs.empty())
    throw Error(kExitUsage, "verify needs --expect GPU[,GPU...] or --snapshot FILE",
                "e.g. gpumap verify --expect 2,3   (nvidia-smi indices, UUIDs or PCI bus ids)");
  Environment env = apply_env_options(ctx, args);
  VerifyAnswer a = verify_gpus(ctx.session(), env, specs, args.has("--prefix"), args.has("--probe"));
  std::cout << render_verify(a, ctx.json());
  return a.code;
}

}  // namespace

Command verify_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back({"--expect", true, true, "GPU[,GPU...]", "the physical GPUs cuda:0, cuda:1, ... must be, in order"});
  opts.push_back({"--prefix", false, false, "", "only cuda:0..n-1 must match; more visible GPUs are allowed"});
  opts.push_back(probe_option());
  opts.push_back({"--snapshot", true, false, "FILE", "instead: exit 4 when the GPU numbering drifted from this snapshot"});
  return {"verify", "check that cuda:0.. are exactly the expected GPUs (for scripts)",
          "gpumap verify --expect GPU[,GPU...] [--prefix] [--probe] [--json] [--env NAME=VALUE]... [--unset NAME]... | "
          "gpumap verify --snapshot FILE [--json]",
          "Checks that this environment's visible GPUs are exactly the expected physical GPUs in that\n"
          "order (GPU = nvidia-smi index, UUID or unique prefix, MIG device UUID, or PCI bus id).  By\n"
          "default the whole visible list must match; with --prefix only cuda:0..n-1 must, and more may\n"
          "be visible.  On a difference it prints the CUDA_VISIBLE_DEVICES value that would match.\n"
          "Exit 0 on a match, 4 on a difference (printed), 5 when cuInit would fail, 2 on a bad GPU name.\n"
          "With --snapshot FILE (from `gpumap snapshot save`), for start-up scripts and node health checks:\n"
          "exit 0 when the numbering is as recorded, 4 when it drifted (what changed is printed), 2 when FILE\n"
          "is missing or damaged (docs/snapshot.md).",
          opts, false, run};
}

}  // namespace gpumap
