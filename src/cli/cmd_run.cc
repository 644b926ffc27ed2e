// gpumap run: pick GPUs, lease them, and run a command pinned to them (and to their CPUs).
//
// Design: gpumap stays as the parent.  It holds one flock()ed lock file per GPU and the job
// inherits those descriptors: a flock belongs to the open file description, so the lease
// lasts until the last process holding it has exited, gpumap or any process of the job,
// however each of them ends (kill -9 of gpumap included).  The job runs in a process group of
// its own; gpumap forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to that whole group, and exits
// with the command's status (128+signal when a signal killed it).  Should gpumap be killed
// first, the command gets SIGTERM (PR_SET_PDEATHSIG) and the lease stays with the job.
#include <cstdio>
#include <iostream>

#include "cli/pick_options.h"
#include "model/error.h"
#include "output/launch_view.h"
#include "session/launch.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (!args.has_rest() || args.rest().empty())
    throw Error(kExitUsage, "run: no command given", "put the command after `--`: gpumap run --gpus 1 -- python3 train.py");
  PickRequest req = pick_request(args);
  double wait_s = args.number("--wait", kBoundWaitSeconds).value_or(0);
  LaunchRequest launch{.form = cvd_form(args), .bind_cpus = !args.has("--no-cpu-bind"), .mark_bound = false,
                       .cpus_not_asked = "--no-cpu-bind"};
  const std::vector<std::string>& cmd = args.rest();

  LeasedGpus held;
  LaunchAnswer a = start_run(ctx.session(), req, {.wait_s = wait_s, .what = "run", .argv = cmd}, launch, held);
  report_launch(args, ctx, run_json(a), run_text(a));

  LaunchResult res = run_leased(a.plan, cmd, held);
  if (!res.exec_error.empty()) {
    std::fprintf(stderr, "gpumap: error: run: %s\n  hint: check the program name and PATH (no shell is used: "
                         "for shell syntax run `sh -c '...'`)\n", res.exec_error.c_str());
  }
  return res.exit_code;  // the leases close with `held`, right after the command ended
}

}  // namespace

Command run_command() {
  std::vector<OptionSpec> opts = pick_options();
  opts.push_back({"--wait", true, false, "SECONDS", "wait up to this long for GPUs to qualify (default: fail at once)"});
  opts.push_back({"--no-cpu-bind", false, false, "", "keep the inherited CPU affinity"});
  opts.push_back(cvd_form_option());
  opts.push_back(json_file_option());
  return {"run", "pick GPUs, lease them, and run a command pinned to them",
          "gpumap run [--gpus N] [pick options] [--wait SECONDS] [--no-cpu-bind] [--cvd-form index|uuid]\n"
          "           [--json] [--json-file FILE] -- CMD [ARGS...]",
          "Picks GPUs like `gpumap pick`, takes a lease on each (a lock file per GPU in\n"
          "$GPUMAP_LOCK_DIR, default /tmp/gpumap-leases, shared by every user), then runs CMD directly\n"
          "(PATH lookup, no shell) with CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA_VISIBLE_DEVICES naming the\n"
          "GPUs by their PCI-order index (every program accepts plain indices; --cvd-form uuid writes\n"
          "UUIDs instead, which survive renumbering but break programs that int() the entries; MIG\n"
          "devices are always named by UUID), and CPU affinity set to the GPUs' local CPUs within the\n"
          "inherited set.  The mapping is printed on stderr (with --json as one JSON document;\n"
          "--json-file FILE also writes that document to FILE before CMD starts; docs/cli.md).  gpumap stays as CMD's parent; CMD runs in\n"
          "a process group of its own (the job), which gets SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to\n"
          "gpumap, and the terminal when gpumap has it.  The job inherits the lease descriptors: each\n"
          "GPU stays leased until the job's last process has exited, even if gpumap is killed (CMD then\n"
          "gets SIGTERM).  gpumap exits with CMD's exit code (128+signal when a signal\n"
          "ended it; 127/126 when CMD cannot be started).  A leased GPU is never picked by another\n"
          "gpumap.  Exit 6 when not enough GPUs qualify now (or within --wait), saying what blocked\n"
          "each; at once when more GPUs are asked for than could ever qualify.",
          opts, false, run, false, true};
}

}  // namespace gpumap
