// Resolution: which GPUs a process gets as cuda:0..n-1, and why, as a pure function of
// CUDA's device orders and the process's CUDA_DEVICE_ORDER / CUDA_VISIBLE_DEVICES.
// It models the driver's measured rules (docs/driver-rules.md); a disagreement with a
// real driver is a bug here.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "env/cuda_device_order.h"
#include "env/cuda_visible_devices.h"
#include "model/cuda_view.h"  // CudaView, EntryDecision, CudaInitError: the values
#include "model/uuid.h"

namespace gpumap {

/// "CUDA_ERROR_NO_DEVICE", ...; nullptr for kNone.
const char* cuda_error_name(CudaInitError e);
int cuda_error_code(CudaInitError e);
CudaInitError cuda_error_from_name(const std::string& name);

/// "visible", "no_match", ... (the JSON's entry outcomes).
const char* entry_outcome_name(EntryOutcome o);

/// Which base order the driver uses for this CUDA_DEVICE_ORDER: nullopt when the order is
/// invalid (cuInit fails before any list is read).
std::optional<DeviceOrder> base_order_kind(const DeviceOrderSetting& s);

/// Predicts the CUDA view.  `base_order` is every CUDA device's UUID in the order the
/// setting selects (PCI order for PCI_BUS_ID, the driver's default order otherwise);
/// it is not read when the order setting is invalid.
CudaView predict_cuda_view(const std::vector<std::string>& base_order,
                           const std::optional<std::string>& cuda_device_order,
                           const std::optional<std::string>& cuda_visible_devices);

}  // namespace gpumap
