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


/// The cached order, when `dir` holds one for exactly this key and it lists exactly
/// the key's devices (each at most once).
std::optional<std::vector<std::string>> cache_lookup(const std::string& dir, const OrderCacheKey& key);

/// Stores the order (atomically: a temporary file renamed over the old one; folder 0700,
/// file 0600).  Failures are ignored: the cache only saves time.
void cache_store(const std::string& dir, const OrderCacheKey& key, const std::vector<std::string>& order);

}  // namespace gpumap
