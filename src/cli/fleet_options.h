// The options `gpumap fleet` and `gpumap top --prometheus` share: where Prometheus is, the
// filters, each query's limit, credentials and TLS; read the same way for both.
#pragma once
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "session/fleet.h"

namespace gpumap {

/// --prometheus (else $GPUMAP_PROMETHEUS), --node, --job, --user, --gpu-model, --processes,
/// --timeout and --http.config.file as a request; `info`: list info findings too.
FleetRequest fleet_request(const Args& args, const Context& ctx, bool info);

/// Whether any of those options is given (top refuses them without --prometheus or --fleet).
bool has_fleet_option(const Args& args);

/// Their specs, for the commands' option lists.
std::vector<OptionSpec> fleet_source_options();

}  // namespace gpumap
