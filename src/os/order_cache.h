// A per-user cache of the driver's base device order, for hosts where it cannot be
// derived from NVML (mixed models under FASTEST_FIRST, MIG).  Keyed by boot id, driver
// version, order kind and the set of UUIDs; a corrupt, foreign or stale file is ignored
// and rewritten.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/order_cache_key.h"

namespace gpumap {


/// Why `dir` cannot serve as the cache, "" when it can (or would, once created): the folder and
/// the reason, cause first (not a folder; owned by another user or writable by others, so its
/// orders could be planted; no write permission; a read-only file system; its parent missing
/// or not writable).  Reads only: creates nothing.
std::string cache_dir_problem(const std::string& dir);

/// What to do about a cache_dir_problem, one line: the command that repairs the folder, or
/// pointing GPUMAP_CACHE_DIR at a folder of this user's.
std::string cache_dir_fix(const std::string& dir, const std::string& problem);

/// The cached order, when `dir` holds one for exactly this key and it lists exactly
/// the key's devices (each at most once).  A folder that is not this user's own (owned by
/// another user, writable by others) is not read: `problem` (when given) says so.
std::optional<std::vector<std::string>> cache_lookup(const std::string& dir, const OrderCacheKey& key,
                                                     std::string* problem = nullptr);

/// Stores the order (atomically: a temporary file renamed over the old one; folder 0700,
/// file 0600).  The cache only saves time, so a failure stops nothing: it is returned, in
/// words naming the folder and the cause ("" when stored, or when there is no cache to keep).
std::string cache_store(const std::string& dir, const OrderCacheKey& key, const std::vector<std::string>& order);

}  // namespace gpumap
