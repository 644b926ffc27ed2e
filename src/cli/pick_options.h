// What `gpumap pick` and `gpumap run` share: the pick options (the operations are in
// session/lease_gpus.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"
#include "session/lease_gpus.h"

namespace gpumap {

/// --gpus, --min-free-mib, --max-util, --include, --exclude, --allow-busy, --allow-unknown.
std::vector<OptionSpec> pick_options();
/// The request those options describe; Error(kExitUsage) naming a bad value.
PickRequest pick_request(const Args& args);

}  // namespace gpumap
