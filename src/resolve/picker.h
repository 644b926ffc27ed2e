// The pick policy: which GPUs to give a job, with the reason each other GPU was passed over.
// Pure: a snapshot, the GPUs this process can see, who holds a lease, and the constraints in;
// a choice out.  No I/O.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "resolve/gpu_selector.h"  // the selectors --include/--exclude take

namespace gpumap {

/// How the caller spells the request's options in messages: each front end names its own (the
/// CLI its flags, the C API and Python their keywords).  The defaults are plain words.
struct OptionNames {
  std::string gpus = "the GPU count", wait = "a wait", allow_busy = "allowing busy GPUs";
  std::string allow_unknown = "allowing unreadable GPUs", include = "include", exclude = "exclude";
  std::string limits = "the include/exclude/free-memory limits";
};

struct PickRequest {
  int count = 1;                          // how many GPUs
  std::optional<uint64_t> min_free_mib;   // at least this much free memory on each
  std::optional<uint32_t> max_util;       // at most this utilisation (percent) on each
  std::vector<std::string> include;       // selectors: only these (empty: all visible)
  std::vector<std::string> exclude;       // selectors: never these
  bool allow_busy = false;                // also GPUs that run other processes (or whose process list is unknown)
  bool allow_unknown = false;             // a process list or utilisation that could not be read does not disqualify
  OptionNames names;                      // for messages and reasons
  /// What limits the GPUs this process can see, in words, said after "can see only N" (" (this Slurm
  /// step's allocation: SLURM_STEP_GPUS=2,3 ...)"); session/lease_gpus.h visible_limit.  "" for none.
  std::string visible_limit = {};
};

struct Rejection {
  uint32_t nvml_index = 0;
  std::string uuid;
  std::vector<std::string> reasons;  // "leased by pid 12 (alice) ...", "12 MiB free, want 2000"
};

struct PickResult {
  std::vector<std::string> uuids;      // the choice, in nvidia-smi order; empty when not enough qualify
  std::vector<Rejection> rejected;     // every visible GPU passed over, with why
  std::vector<std::string> notes;      // why this set (NVLink, CPU affinity)
  std::string failure;                 // non-empty when no choice: what blocked, in words
  bool impossible = false;             // asked for more GPUs than could ever qualify (not leases/load)
};

/// Chooses request.count GPUs among `visible` (UUIDs this process can use; unknown UUIDs are
/// skipped, and MIG devices unless --include names them: then only those, in the order given).  `leases` maps a UUID to why its lease is unavailable
/// ("leased by pid 12 (alice) ...").
/// Policy: drop leased, excluded, MIG-enabled, too-full, too-busy GPUs (and, unless
/// allow_busy, those running processes); unless allow_unknown, an unreadable process list
/// (without allow_busy) or utilisation (with max_util) disqualifies: unknown is never free; then for one GPU the most free memory and lowest
/// utilisation; for several the set with the most NVLink-connected pairs (then links), then
/// the fewest distinct CPU-affinity groups, then the most free memory, then nvidia-smi order.
PickResult pick_gpus(const Snapshot& s, const std::vector<std::string>& visible,
                     const std::map<std::string, std::string>& leases, const PickRequest& request);

}  // namespace gpumap
