// UUIDs: the one place that says when two UUIDs name the same device.  Two readings, because
// the layers write them differently:
//  - same_uuid: NVML's names as written ("GPU-..." for a GPU, "MIG-..." for a MIG device),
//    compared whole and case-insensitively.  For UUIDs that came from NVML or were typed to name
//    an NVML device: a "GPU-" never equals a "MIG-".
//  - same_uuid_hex: the 32 hex digits only (case, dashes and the "GPU-"/"MIG-" word aside).  For
//    UUIDs that may come from CUDA, which writes a MIG device as "GPU-<hex of its MIG UUID>".
// Snapshot::find_device / find_cuda_device are the lookups built on them (model/snapshot.h).
#pragma once
#include <string>

namespace gpumap {

/// Lower-case hex digits of a UUID without its "GPU-"/"MIG-" word and dashes.
std::string uuid_hex(const std::string& uuid);

/// The same UUID text, case aside ("GPU-AB.." == "gpu-ab.."; "GPU-ab.." != "MIG-ab..").
bool same_uuid(const std::string& a, const std::string& b);

/// Whether `uuid` starts with `prefix`, case aside (a UUID prefix a user typed: "gpu-28554ffd").
bool uuid_starts_with(const std::string& uuid, const std::string& prefix);

/// A key for sets and maps of UUIDs: two keys are equal exactly when same_uuid says so.
std::string uuid_key(const std::string& uuid);

/// The same 16 bytes, however written (CUDA's "GPU-<hex>" for a MIG device equals its "MIG-<hex>").
bool same_uuid_hex(const std::string& a, const std::string& b);

}  // namespace gpumap
