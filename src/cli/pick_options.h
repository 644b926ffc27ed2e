// What `gpumap pick` and `gpumap run` share: the pick options, the GPUs this process may use,
// and who holds their leases.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"
#include "resolve/picker.h"

namespace gpumap {

/// --gpus, --min-free-mib, --max-util, --include, --exclude, --allow-busy.
std::vector<OptionSpec> pick_options();
/// The request those options describe; Error(kExitUsage) naming a bad value.
PickRequest pick_request(const Args& args);

/// Reads the snapshot with processes and topology (first read of the context), and returns the
/// UUIDs of the whole GPUs this process may use (its CUDA view).  Error when CUDA would fail.
/// NVLink is read only when `count` > 1 (it needs the P2P query, ~19 ms on first use).
std::vector<std::string> pickable_uuids(Context& ctx, int count);

/// The lease folder for this context (GPUMAP_LOCK_DIR or the default).
std::string context_lease_dir(const Context& ctx);

/// UUID -> why its lease is unavailable ("leased by pid 12 (alice) since ...", "lock file ...
/// is a symbolic link"), for the GPUs among `uuids` that are leased or unsafe.
std::map<std::string, std::string> lease_blockers(const std::string& dir, const std::vector<std::string>& uuids);

/// "cuda:0 -> GPU 1  GPU-...  00000000:07:00.0  NVIDIA H200" lines, one per UUID.
std::string describe_choice(const Snapshot& s, const std::vector<std::string>& uuids, const std::string& indent);

}  // namespace gpumap
