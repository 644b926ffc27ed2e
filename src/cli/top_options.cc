#include "cli/top_options.h"

#include "cli/fleet_options.h"
#include "model/error.h"
#include "model/text.h"

namespace gpumap {
namespace {

[[noreturn]] void bad_sort(const std::string& name, const std::vector<std::string>& words, const char* what) {
  throw Error(kExitUsage, "--sort " + name + ": not a " + what + did_you_mean(name, words), "one of " + join(words, ", "));
}

}  // namespace

TopView top_view_options(const Args& args) {
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
  return view;
}

FleetTopView fleet_top_view_options(const Args& args, const Context& ctx, FleetRequest& request) {
  if (args.has("--tree"))
    throw Error(kExitUsage, "--tree: the fleet view has no process tree (parents are in each node's /proc)", "run gpumap top --tree on the node");
  if (args.has("--simulate"))
    throw Error(kExitUsage, "--simulate: the fleet view reads Prometheus, not a host",
                "to try it without GPUs, let Prometheus scrape `gpumap serve --simulate HOST` (docs/fleet.md); "
                "this host's view: gpumap top --simulate HOST");
  request = fleet_request(args, ctx, args.has("--all"));
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
  return view;
}

std::vector<OptionSpec> top_options() {
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
  return options;
}

}  // namespace gpumap
