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
#include "model/uuid.h"

namespace gpumap {

enum class CudaInitError { kNone, kNoDevice, kInvalidDevice, kOther };
/// "CUDA_ERROR_NO_DEVICE", ...; nullptr for kNone.
const char* cuda_error_name(CudaInitError e);
int cuda_error_code(CudaInitError e);
CudaInitError cuda_error_from_name(const std::string& name);

enum class EntryOutcome {
  kVisible,     // becomes the next cuda:N
  kNoMatch,     // a UUID prefix that matches no GPU: ends the list
  kAmbiguous,   // a UUID prefix that matches several GPUs: ends the list
  kOutOfRange,  // an index past the last GPU: ends the list
  kInvalid,     // unreadable: ends the list
  kMixedKind,   // an index after UUIDs or a UUID after indices: ends the list
  kAfterCut,    // after an entry that ended the list: ignored
  kDuplicate,   // names a GPU already in the list: cuInit fails
};
const char* entry_outcome_name(EntryOutcome o);

struct EntryDecision {
  CvdEntry entry;
  EntryOutcome outcome = EntryOutcome::kInvalid;
  std::optional<unsigned> ordinal;  // kVisible: the cuda:N it becomes
  std::string uuid;                  // kVisible, kDuplicate: the GPU it names
  std::vector<std::string> candidates;  // kAmbiguous: the GPUs the prefix matches
};

struct CudaView {
  CudaInitError error = CudaInitError::kNone;
  std::string error_reason;      // plain words, when error != kNone
  DeviceOrderSetting order;      // CUDA_DEVICE_ORDER as read
  bool visible_set = false;      // CUDA_VISIBLE_DEVICES present
  std::vector<std::string> uuids;   // cuda:N -> UUID; empty on error
  std::vector<EntryDecision> entries;  // one per CUDA_VISIBLE_DEVICES entry
  /// Index of the first entry that ended the list early, if any.
  std::optional<size_t> cut_at;
};

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
