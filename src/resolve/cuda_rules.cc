#include "resolve/cuda_rules.h"
#include "resolve/mig_limit.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace gpumap {

const char* cuda_error_name(CudaInitError e) {
  switch (e) {
    case CudaInitError::kNone: return nullptr;
    case CudaInitError::kNoDevice: return "CUDA_ERROR_NO_DEVICE";
    case CudaInitError::kInvalidDevice: return "CUDA_ERROR_INVALID_DEVICE";
    case CudaInitError::kDriverCrash: return "DRIVER_CRASH";
    case CudaInitError::kOther: return "CUDA_ERROR_UNKNOWN";
  }
  return nullptr;
}

int cuda_error_code(CudaInitError e) {
  switch (e) {
    case CudaInitError::kNone: return 0;
    case CudaInitError::kNoDevice: return 100;
    case CudaInitError::kInvalidDevice: return 101;
    case CudaInitError::kDriverCrash: return -1;  // no CUresult: cuInit never returns
    case CudaInitError::kOther: return 999;
  }
  return 999;
}

CudaInitError cuda_error_from_name(const std::string& name) {
  if (name.empty() || name == "CUDA_SUCCESS") return CudaInitError::kNone;
  if (name == "CUDA_ERROR_NO_DEVICE") return CudaInitError::kNoDevice;
  if (name == "CUDA_ERROR_INVALID_DEVICE") return CudaInitError::kInvalidDevice;
  if (name == "DRIVER_CRASH") return CudaInitError::kDriverCrash;
  return CudaInitError::kOther;
}

const char* entry_outcome_name(EntryOutcome o) {
  switch (o) {
    case EntryOutcome::kVisible: return "visible";
    case EntryOutcome::kNoMatch: return "no_match";
    case EntryOutcome::kAmbiguous: return "ambiguous";
    case EntryOutcome::kOutOfRange: return "out_of_range";
    case EntryOutcome::kInvalid: return "invalid";
    case EntryOutcome::kMixedKind: return "mixed_kind";
    case EntryOutcome::kAfterCut: return "after_cut";
    case EntryOutcome::kDuplicate: return "duplicate";
  }
  return "?";
}

std::optional<DeviceOrder> base_order_kind(const DeviceOrderSetting& s) {
  if (s.order == DeviceOrder::kInvalid) return std::nullopt;
  return s.order;
}

CudaView predict_cuda_view(const std::vector<std::string>& base_order,
                           const std::optional<std::string>& cuda_device_order,
                           const std::optional<std::string>& cuda_visible_devices) {
  CudaView v;
  v.order = parse_cuda_device_order(cuda_device_order);
  v.visible_too_long = cuda_visible_devices && cuda_visible_devices->size() >= kCudaVisibleDevicesIgnoredBytes;
  v.visible_set = cuda_visible_devices.has_value() && !v.visible_too_long;  // too long: read as unset
  if (v.visible_set) {
    for (CvdEntry& e : parse_cuda_visible_devices(*cuda_visible_devices)) {
      EntryDecision d;
      d.entry = std::move(e);
      v.entries.push_back(std::move(d));
    }
  }
  // Measured: an invalid order fails cuInit before the list matters.
  if (v.order.order == DeviceOrder::kInvalid) {
    v.error = CudaInitError::kInvalidDevice;
    v.error_reason = "CUDA_DEVICE_ORDER: " + v.order.reason;
    for (EntryDecision& d : v.entries) d.outcome = EntryOutcome::kAfterCut;
    return v;
  }
  if (!v.visible_set) {
    v.uuids = base_order;
    if (v.uuids.empty()) {
      v.error = CudaInitError::kNoDevice;
      v.error_reason = "the driver reports no CUDA-capable GPU";
    }
    return v;
  }
  // Measured: a long first MIG- entry crashes cuInit before any GPU is chosen, unless it is in the
  // legacy MIG-GPU- form, which the driver turns down at any length.  (Under an invalid
  // CUDA_DEVICE_ORDER, handled above, it was not measured.)
  if (!v.entries.empty() && v.entries.front().entry.raw.compare(0, 4, "MIG-") == 0 &&
      v.entries.front().entry.raw.compare(0, 8, kLegacyMigPrefix) != 0 &&
      v.entries.front().entry.raw.size() >= kMigEntryCrashBytes) {
    v.error = CudaInitError::kDriverCrash;
    v.error_reason = "the first CUDA_VISIBLE_DEVICES entry starts with MIG- and is " +
                     std::to_string(v.entries.front().entry.raw.size()) + " bytes long: on such an entry (" +
                     std::to_string(kMigEntryCrashBytes) +
                     " bytes or more) the CUDA driver crashes in cuInit (SIGSEGV) or never returns (measured on "
                     "driver 580.159.04)";
    for (EntryDecision& d : v.entries) d.outcome = EntryOutcome::kAfterCut;
    v.entries.front().outcome = EntryOutcome::kInvalid;
    return v;
  }
  std::vector<std::string> hexes;
  for (const std::string& u : base_order) hexes.push_back(uuid_hex(u));

  std::optional<CvdEntryKind> list_kind;
  std::set<std::string> taken;
  bool duplicate = false;
  for (size_t i = 0; i < v.entries.size(); ++i) {
    EntryDecision& d = v.entries[i];
    if (v.cut_at) {
      d.outcome = EntryOutcome::kAfterCut;
      continue;
    }
    const CvdEntry& e = d.entry;
    if (e.kind == CvdEntryKind::kInvalid) {
      d.outcome = EntryOutcome::kInvalid;
    } else if (list_kind && *list_kind != e.kind) {
      d.outcome = EntryOutcome::kMixedKind;
    } else if (e.kind == CvdEntryKind::kInteger) {
      if (e.index < base_order.size()) {
        d.uuid = base_order[e.index];
        d.outcome = EntryOutcome::kVisible;
      } else {
        d.outcome = EntryOutcome::kOutOfRange;
      }
    } else {
      for (size_t g = 0; g < hexes.size(); ++g)
        if (hexes[g].compare(0, e.uuid_hex.size(), e.uuid_hex) == 0) d.candidates.push_back(base_order[g]);
      if (d.candidates.size() == 1) {
        d.uuid = d.candidates.front();
        d.candidates.clear();
        d.outcome = EntryOutcome::kVisible;
      } else {
        d.outcome = d.candidates.empty() ? EntryOutcome::kNoMatch : EntryOutcome::kAmbiguous;
      }
    }
    if (!list_kind) list_kind = e.kind;
    if (d.outcome != EntryOutcome::kVisible) {
      v.cut_at = i;
      continue;
    }
    if (!taken.insert(d.uuid).second) {
      d.outcome = EntryOutcome::kDuplicate;
      duplicate = true;
      continue;
    }
    d.cuda_ordinal = static_cast<unsigned>(v.uuids.size());
    v.uuids.push_back(d.uuid);
  }
  if (duplicate) {
    v.error = CudaInitError::kInvalidDevice;
    v.error_reason = "CUDA_VISIBLE_DEVICES names the same GPU twice; a repeated GPU makes cuInit fail";
    v.uuids.clear();
    for (EntryDecision& d : v.entries) d.cuda_ordinal.reset();
  } else if (v.uuids.empty()) {
    v.error = CudaInitError::kNoDevice;
    v.error_reason = v.entries.empty() || v.cut_at == 0
                         ? "the first CUDA_VISIBLE_DEVICES entry names no GPU, so no GPU is visible"
                         : "CUDA_VISIBLE_DEVICES names no GPU";
  }
  return v;
}

bool one_mig_device_per_process(const std::optional<std::string>& driver_version) {
  if (!driver_version || driver_version->empty() || !std::isdigit(static_cast<unsigned char>((*driver_version)[0]))) return false;
  unsigned long major = 0;
  for (char c : *driver_version) {
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    major = major * 10 + static_cast<unsigned long>(c - '0');
    if (major > 100000) break;
  }
  return major < 570;
}

std::vector<std::string> keep_one_mig_device(CudaView& v, const std::function<bool(const std::string&)>& is_mig) {
  std::vector<std::string> left_out;
  if (v.error != CudaInitError::kNone) return left_out;
  auto first = std::find_if(v.uuids.begin(), v.uuids.end(), is_mig);
  if (first == v.uuids.end()) return left_out;
  std::string kept = *first;
  for (const std::string& u : v.uuids)
    if (u != kept) left_out.push_back(u);
  v.uuids = {kept};
  return left_out;
}

}  // namespace gpumap
