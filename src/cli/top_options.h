// `gpumap top`'s options read into the views they start (the host's and the fleet's), so
// cli/cmd_top.cc only picks the mode, reads and renders.
#pragma once
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "output/fleet_top_view.h"
#include "output/top_view.h"
#include "session/fleet.h"

namespace gpumap {

/// --interval, --sort, --filter, --tree and --all as the host's view starts; a bad value is
/// Error(kExitUsage) naming it.  Refuses the fleet's options (they need --prometheus).
TopView top_view_options(const Args& args);

/// --interval, --sort and --filter as the fleet's view starts, and (cli/fleet_options.h) the
/// request it reads with into `request`; refuses --tree and --simulate.
FleetTopView fleet_top_view_options(const Args& args, const Context& ctx, FleetRequest& request);

/// The options of `gpumap top`, both modes, for its help.
std::vector<OptionSpec> top_options();

}  // namespace gpumap
