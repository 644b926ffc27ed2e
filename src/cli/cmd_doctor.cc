// gpumap doctor: every rule (docs/findings.md) against this environment; exit 7 on an error.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/doctor_view.h"
#include "session/diagnose.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  DoctorAnswer a = doctor(ctx.session(), env, args.has("--probe"), args.has("--verbose"));
  std::cout << render_doctor(a, ctx.json());
  return a.errors ? kExitFindings : kExitOk;
}

}  // namespace

Command doctor_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back(probe_option());
  opts.push_back(watch_option());
  opts.push_back({"--verbose", false, false, "", "show every info finding, also the reminders true of any list (ordinals-are-relative)", {"-v"}});
  return {"doctor", "check the environment for every known GPU-numbering trap",
          "gpumap doctor [--json] [--env NAME=VALUE]... [--unset NAME]... [--probe] [--watch SECONDS] [-v]",
          "Runs every rule in docs/findings.md against this environment (or the one given with\n"
          "--env/--unset): CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER mistakes, launcher and Slurm\n"
          "variables, container and MIG traps.  Each finding has an id, a severity, the evidence and\n"
          "a fix to paste; findings of one cause are one finding (the others its \"also\" lines),\n"
          "and where several findings have fixes a last line fixes them all at once.  Exit 7 when any finding is an error, 0 otherwise.",
          opts, false, [](const Args& a, Context& c) { return run_watchable(a, c, run); }};
}

}  // namespace gpumap
