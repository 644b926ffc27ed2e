// What one process's CUDA variables say, and what CUDA makes of them, as plain values: the
// parsers (env/cuda_device_order.h, env/cuda_visible_devices.h) fill the first half, the
// resolver (resolve/cuda_rules.h, resolve/resolve_mapping.h) the second, and findings/ reads both
// without calling either.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/pci.h"

namespace gpumap {

// --- CUDA_DEVICE_ORDER, as read (env/cuda_device_order.h) ---

enum class DeviceOrder { kFastestFirst, kPciBusId, kInvalid };

/// Values this long or longer are ignored by cuInit as if unset (measured, driver 580.159.04,
/// 1 x H200: 1023 bytes of CUDA_DEVICE_ORDER are read, 1024 ignored; 2624 bytes of
/// CUDA_VISIBLE_DEVICES read, 2625 ignored; bytes, not characters; the rest of the environment
/// does not move the limit).  docs/driver-rules.md.
inline constexpr size_t kCudaDeviceOrderIgnoredBytes = 1024;
inline constexpr size_t kCudaVisibleDevicesIgnoredBytes = 2625;
/// A first CUDA_VISIBLE_DEVICES entry that starts with "MIG-" (exactly: not "mig-", not after a
/// space) and is this many bytes or longer makes cuInit crash the process (SIGSEGV) or hang;
/// 1031 bytes are read normally.  Measured on driver 580.159.04 (docs/driver-rules.md).
inline constexpr size_t kMigEntryCrashBytes = 1032;
/// Except one in the legacy form (exactly "MIG-GPU-", not "MIG-gpu-" or "MIG-GPUx"): the driver
/// turns it down (no device) at every length, 1032 to 2624 bytes.  Measured on driver 580.159.04.
inline constexpr const char* kLegacyMigPrefix = "MIG-GPU-";

struct DeviceOrderSetting {
  DeviceOrder order = DeviceOrder::kFastestFirst;
  bool set = false;    // the variable is present in the environment
  bool too_long = false;  // set, but so long that the driver ignores it (kCudaDeviceOrderIgnoredBytes)
  std::string reason;  // kInvalid: why, naming what was probably meant
};

// --- One CUDA_VISIBLE_DEVICES entry, as read (env/cuda_visible_devices.h) ---

enum class CvdEntryKind {
  kInteger,  // an index into CUDA's device order
  kUuid,     // a GPU-/MIG- UUID prefix
  kInvalid,  // names no GPU whatever the host (no digits, bad UUID characters, empty)
};

/// What an entry looks like it was meant to be, beside how CUDA reads it (the parser sees both;
/// the rules read this instead of looking at the text again).
enum class CvdEntryForm {
  kPlain,            // an index or a GPU-/MIG- UUID, as CUDA expects
  kBlank,            // empty or only white space
  kBareUuid,         // a UUID without `GPU-` (8 hex digits then '-'): CUDA reads its leading digits
  kPciAddress,       // a PCI bus id (`00000000:3B:00.0`): CUDA reads its leading digits
  kLegacyMig,        // `MIG-GPU-<uuid>/<gi>/<ci>`, refused since R470
  kContainerKeyword, // `all`, `none`, `void`, `NoDevFiles` (NVIDIA_VISIBLE_DEVICES words)
  kMiscasedWord,     // `gpu-`/`mig-` in another case than `GPU-`/`MIG-`
  kSpaceBeforeUuid,  // white space before `GPU-`
};

struct CvdEntry {
  std::string raw;       // the entry exactly as written
  CvdEntryKind kind = CvdEntryKind::kInvalid;
  CvdEntryForm form = CvdEntryForm::kPlain;
  uint64_t index = 0;    // kInteger: the value CUDA uses (after the 32-bit cut)
  bool negative = false; // kInteger: written with a minus sign and not zero (`-1`): names no GPU
  bool sign = false;     // kInteger: written with a `+` or `-` (after any white space)
  bool wider_than_32_bits = false;  // kInteger: the number as written does not fit 32 bits
  std::string digits;    // kInteger: the decimal digits as written (leading zeros kept)
  std::string trailing;  // kInteger: what follows the digits, which CUDA ignores ("" when nothing)
  std::string uuid_hex;  // kUuid: lower-case hex digits of the prefix, no dashes ("" matches every GPU)
  bool mig_word = false; // kUuid: written `MIG-` (else `GPU-`)
  std::string ignored_tail;  // kUuid: the characters after the prefix that the driver does not read
  std::optional<PciAddress> pci;  // kPciAddress: the address as written
  std::string reason;    // kInvalid: why; otherwise a quirk worth telling ("';0' ignored"), or ""
};

// --- What CUDA makes of them (resolve/cuda_rules.h predicts it) ---

/// kDriverCrash: cuInit does not return at all (the process dies of SIGSEGV, or hangs): measured
/// for a long first `MIG-` entry (kMigEntryCrashBytes).
enum class CudaInitError { kNone, kNoDevice, kInvalidDevice, kDriverCrash, kOther };

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

struct EntryDecision {
  CvdEntry entry;
  EntryOutcome outcome = EntryOutcome::kInvalid;
  std::optional<unsigned> cuda_ordinal;  // kVisible: the cuda:N it becomes
  std::string uuid;                  // kVisible, kDuplicate: the GPU it names
  std::vector<std::string> candidates;  // kAmbiguous: the GPUs the prefix matches
};

struct CudaView {
  CudaInitError error = CudaInitError::kNone;
  std::string error_reason;      // plain words, when error != kNone
  DeviceOrderSetting order;      // CUDA_DEVICE_ORDER as read
  bool visible_set = false;      // CUDA_VISIBLE_DEVICES present and read (not too long)
  bool visible_too_long = false; // present, but kCudaVisibleDevicesIgnoredBytes or longer: ignored as if unset
  std::vector<std::string> uuids;   // cuda:N -> UUID; empty on error
  std::vector<EntryDecision> entries;  // one per CUDA_VISIBLE_DEVICES entry
  /// Index of the first entry that ended the list early, if any.
  std::optional<size_t> cut_at;
};

/// The one reading of "every GPU hidden on purpose" (the CPU-only idiom), for the rules
/// (findings/: gpus-hidden is a note, no other CUDA_VISIBLE_DEVICES rule fires) and for the
/// library's device list (session/devices: [] instead of an error): CUDA_VISIBLE_DEVICES set
/// and exactly one entry, blank (`CUDA_VISIBLE_DEVICES=`) or a negative index (`-1`).  CUDA stops
/// at a first `-1` whatever follows, so `-1,0` gives no GPU too, but it is not a clean request
/// (the `0` is never read): the rules call it an error and the library does not answer `[]`.
/// Entries as parsed (env/cuda_visible_devices.h); `visible_set` as CudaView::visible_set.
inline bool gpus_hidden_on_purpose(bool visible_set, const std::vector<CvdEntry>& entries) {
  if (!visible_set) return false;
  if (entries.empty()) return true;  // set but empty
  if (entries.size() != 1) return false;
  const CvdEntry& e = entries.front();
  return e.form == CvdEntryForm::kBlank || (e.kind == CvdEntryKind::kInteger && e.negative);
}

/// The same on a resolved view (its entries' parsed form).
inline bool gpus_hidden_on_purpose(const CudaView& v) {
  std::vector<CvdEntry> entries;
  for (const EntryDecision& d : v.entries) entries.push_back(d.entry);
  return gpus_hidden_on_purpose(v.visible_set, entries);
}

}  // namespace gpumap
