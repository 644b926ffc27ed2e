// gpumap top: the live view (top/top_app.h), or one frame as text with --once; with --prometheus
// URL (or --fleet and $GPUMAP_PROMETHEUS) the fleet's, node by node, from Prometheus.
#include <iostream>

#include "cli/command.h"
#include "cli/command_help.h"
#include "cli/fleet_options.h"
#include "model/error.h"
#include "model/text.h"
#include "output/style.h"
#include "session/fleet.h"
#include "session/top.h"
#include "top/top_app.h"

namespace gpumap {
namespace {

[[noreturn]] void bad_sort(const std::string& name, const std::vector<std::string>& words, const char* what) {
  throw Error(kExitUsage, "--sort " + name + ": not a " + what + did_you_mean(name, words), "one of " + join(words, ", "));
}

int run_fleet(const Args& args, Context& ctx) {
  if (args.has("--tree"))
    throw Error(kExitUsage, "--tree: the fleet view has no process tree (parents are in each node's /proc)", "run gpumap top --tree on the node");
  if (args.has("--simulate"))
    throw Error(kExitUsage, "--simulate: the fleet view reads Prometheus, not a host",
                "to try it without GPUs, let Prometheus scrape `gpumap serve --simulate HOST` (docs/fleet.md); "
                "this host's view: gpumap top --simulate HOST");
  FleetRequest req = fleet_request(args, ctx, args.has("--all"));
  FleetTopView view;
  view.interval_s = args.number("--interval", 0.25, 3600).value_or(2.0);
  if (auto s = args.value("--sort")) {
    std::optional<FleetTopColumn> c = fleet_top_column_named(*s);
    if (!c) bad_sort(*s, fleet_top_column_words(), "column of the fleet view");
    view.sort = *c;
  }
  if (auto f = args.value("--filter")) {
    if (auto err = fleet_top_filter_error(*f)) throw Error(kExitUsage, "--filter: " + *err, "");
    view.filter = *f;
  }
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
  if (has_fleet_option(args))
    throw Error(kExitUsage, "--node, --job, --user, --gpu-model, --processes, --timeout and --http.config.file are the fleet view's",
                "give --prometheus URL (or --fleet with $GPUMAP_PROMETHEUS set); this host's view filters with --filter");
  TopView view;
  view.interval_s = args.number("--interval", 0.25, 3600).value_or(1.0);
  view.tree = args.has("--tree");
  view.show_info = args.has("--all");
  if (auto s = args.value("--sort")) {
    std::optional<TopColumn> c = top_column_named(*s);
    if (!c) bad_sort(*s, top_column_words(), "column");
    view.sort = *c;
  }
  if (auto f = args.value("--filter")) {
    if (auto err = top_filter_error(*f)) throw Error(kExitUsage, "--filter: " + *err, "");
    view.filter = *f;
  }
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
  std::vector<OptionSpec> options = {
      {"--once", false, false, "", "print one frame as text and exit"},
      {"--interval", true, false, "SECONDS", "seconds between reads (0.25 to 3600, default 1, the fleet 2; + and - change it)"},
      {"--sort", true, false, "COLUMN",
       "sort by pid, user, gpu, cuda, mem, sm, cpu, rss, time, job, rank or command (mem, sm, cpu, rss and time: "
       "largest first); the fleet's nodes by node, state, gpus, mem, util, procs or findings"},
      {"--filter", true, false, "TEXT", "user:NAME, gpu:N, job:ID, pid:N, or text in the command (the fleet: node:TEXT too)"},
      {"--tree", false, false, "", "show processes under their parents"},
      {"--all", false, false, "", "show info findings too"},
      {"--fleet", false, false, "", "the fleet's view from the Prometheus in $GPUMAP_PROMETHEUS (docs/fleet.md)"}};
  for (OptionSpec& o : fleet_source_options()) options.push_back(std::move(o));
  return {"top", "the live view: GPUs, their processes, each process's own cuda:N and its traps; the fleet's with --prometheus",
          "gpumap top [--once] [--interval SECONDS] [--sort COLUMN] [--filter TEXT] [--tree] [--all]\n"
          "       gpumap top --prometheus URL | --fleet [--node NAME] [--job ID] [--user U] [--gpu-model TEXT]\n"
          "                  [--timeout SECONDS] [--http.config.file FILE] [--once] [--interval SECONDS] [--sort COLUMN]",
          command_description("top"), options, false, run};
}

}  // namespace gpumap
