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
#include "model/order_cache_key.h"
#include "model/snapshot.h"
#include "resolve/cuda_view.h"

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

struct Mapping {
  CudaView view;           // the answer (from the model, or from the driver with probe)
  std::string source;      // "predicted" | "cache" | "driver"
  std::string order_note;  // how the base order was obtained, in words
  std::optional<double> driver_ms;  // time the driver took, when it was asked
  std::vector<std::string> base_order;  // every CUDA device in the order the setting selects
  std::vector<CudaDevice> driver_devices;  // with probe: what CUDA itself reported, per ordinal
};

/// UUIDs in PCI order (MIG devices in place of their parent).
std::vector<std::string> pci_order(const Snapshot& s);

/// True when CUDA's base order for `order` follows from NVML alone (measured rule:
/// identical GPUs enumerate in PCI order under FASTEST_FIRST too).
bool order_is_exact(const Snapshot& s, DeviceOrder order);

/// Labels a CUDA UUID ("GPU-" + 16 bytes) as NVML names it (a MIG device's "MIG-...").
std::string nvml_uuid_for(const Snapshot& s, const std::string& cuda_uuid);

Mapping resolve_mapping(const Snapshot& s, const Environment& env, const MappingOptions& opt, const DriverAsk& ask);

}  // namespace gpumap
