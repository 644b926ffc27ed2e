// gpumap top: the live view (top/top_app.h), or one frame as text with --once; with --prometheus
// URL (or --fleet and $GPUMAP_PROMETHEUS) the fleet's, node by node, from Prometheus.  The options
// become the starting views in cli/top_options.h.
#include <iostream>

#include "cli/command.h"
#include "cli/command_help.h"
#include "cli/top_options.h"
#include "model/error.h"
#include "output/style.h"
#include "session/fleet.h"
#include "session/top.h"
#include "top/top_app.h"

namespace gpumap {
namespace {

int run_fleet(const Args& args, Context& ctx) {
  FleetRequest req;
  FleetTopView view = fleet_top_view_options(args, ctx, req);
  auto read = [req] { return read_fleet(req); };
  const TermStyle& st = term_style();
  if (args.has("--once")) {
    view.utf8 = st.utf8;
    std::cout << fleet_top_once(read(), view, st.width, st.color);
    return kExitOk;
  }
  return run_fleet_top({view, st.color}, read);
}

int run(const Args& args, Context& ctx) {
  if (ctx.json())
    throw Error(kExitUsage, "gpumap top has no --json", "frames for programs: gpumap ps --json --watch 1 (the fleet: gpumap fleet --json)");
  if (args.has("--prometheus") || args.has("--fleet")) return run_fleet(args, ctx);
  TopView view = top_view_options(args);
  const Session& base = ctx.session();
  // A fresh snapshot per frame; the processes' command lines and environments are kept between
  // frames (ProcCache): only the reader thread calls this.
  auto read = [driver = base.driver(), env = base.env(), seams = base.seams(), cache = std::make_shared<ProcCache>()] {
    Session fresh(driver, env, seams);
    return read_top_frame(fresh, cache.get());
  };
  const TermStyle& st = term_style();
  if (args.has("--once")) {
    view.utf8 = st.utf8;
    std::cout << top_once(read(), view, st.width, st.color);
    return kExitOk;
  }
  return run_top({view, st.color}, read);
}

}  // namespace

Command top_command() {
  return {"top", "the live view: GPUs, their processes, each process's own cuda:N and its traps; the fleet's with --prometheus",
          "gpumap top [--once] [--interval SECONDS] [--sort COLUMN] [--filter TEXT] [--tree] [--all]\n"
          "       gpumap top --prometheus URL | --fleet [--node NAME] [--job ID] [--user U] [--gpu-model TEXT]\n"
          "                  [--timeout SECONDS] [--http.config.file FILE] [--once] [--interval SECONDS] [--sort COLUMN]",
          command_description("top"), top_options(), false, run};
}

}  // namespace gpumap
