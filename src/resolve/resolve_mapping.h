// The mapping for one environment: cuda:N -> physical GPU, with where the answer came
// from.  Prediction needs no cuInit wherever NVML's view makes it exact; otherwise the
// driver is asked once for its base order (cached per boot), or, with probe, directly.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "env/environment.h"
#include "model/cuda_devices.h"
#include "model/mapping.h"  // Mapping: the value resolve_mapping computes
#include "model/order_cache_key.h"
#include "model/snapshot.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"

namespace gpumap {

/// Asks the driver (cuInit in a child) with exactly this environment.
using DriverAsk = std::function<CudaProbe(const Environment&)>;

/// The order cache (os/order_cache.h in gpumap; empty functions: no cache).
using OrderCacheLookup = std::function<std::optional<std::vector<std::string>>(const OrderCacheKey&)>;
using OrderCacheStore = std::function<void(const OrderCacheKey&, const std::vector<std::string>&)>;

struct MappingOptions {
  bool probe = false;      // ask the driver for this environment directly
  OrderCacheLookup cache_lookup;
  OrderCacheStore cache_store;
  std::string boot_id;     // part of the cache key
  bool subset = false;     // the snapshot lists only some of the driver's devices (a container
                           // what-if): the driver's order keeps only those
};

/// Labels a CUDA UUID ("GPU-" + 16 bytes) as NVML names it (a MIG device's "MIG-...").
std::string nvml_uuid_for(const Snapshot& s, const std::string& cuda_uuid);

/// The mapping of a CUDA already running in the calling process (driver/live_cuda.h's answer):
/// its devices as NVML names them, source "live", no entry decisions (the environment cuInit read
/// is not known; the one now may differ).
Mapping live_mapping(const Snapshot& s, const CudaProbe& live);

/// What CUDA would make of `env` on this host: cuda:0.. as UUIDs (NVML's names), or the error cuInit
/// would return, with each CUDA_VISIBLE_DEVICES entry's decision, predicted by the driver's rules
/// (resolve/cuda_rules.h) over CUDA's base order.  That order is PCI order where it is exact
/// (PCI_BUS_ID, or identical GPUs); else the order cache's (source "cache"), else asked once
/// through `ask` with the visibility variables unset and stored (source "driver").  An invalid
/// CUDA_DEVICE_ORDER gives no order and cuInit's error.  With opt.probe, `ask` is also called
/// with exactly `env`: its answer is the view (source "driver"), the model only giving each
/// entry's reason.  Throws
/// Error(kExitError) when the driver cannot list its devices.  `ask` runs cuInit in a child
/// process: never in this one.
Mapping resolve_mapping(const Snapshot& s, const Environment& env, const MappingOptions& opt, const DriverAsk& ask);

/// The GPUs `view` does not show, neither themselves nor any of their MIG devices (a GPU whose
/// UUID NVML could not read is among them), in nvidia-smi order.
std::vector<const Gpu*> gpus_not_visible(const Snapshot& s, const CudaView& view);

}  // namespace gpumap
