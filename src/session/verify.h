// verify: are cuda:0, cuda:1, ... exactly the expected physical GPUs, in order?
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "session/session.h"

namespace gpumap {

/// The UUID `spec` names: a MIG device's UUID (or a unique prefix of one, "MIG-" included)
/// names that MIG device; anything else is read as select_one_gpu reads it.  Same errors.
std::string expected_uuid(const Snapshot& s, const std::string& spec);

/// The CUDA_VISIBLE_DEVICES value that gives exactly these UUIDs as cuda:0, cuda:1, ...: a GPU
/// in MIG mode is seen through its MIG devices.
std::string cvd_uuid_form(const Snapshot& s, const std::vector<std::string>& uuids);


struct Verification {
  std::vector<std::string> expected;  // UUIDs (GPU or MIG device), in the order given
  Mapping mapping;                    // what this environment gets
  std::vector<std::string> differences;  // one line per difference, in words
  int code = 0;       // kExitOk, kExitMismatch, or kExitCudaWouldFail
  std::string fix;    // when not ok: the CUDA_VISIBLE_DEVICES value (UUIDs) that gives exactly `expected`;
                      // "" when fixing CUDA_DEVICE_ORDER alone does
  std::string fix_order;  // when CUDA_DEVICE_ORDER is invalid (cuInit fails whatever the list): "PCI_BUS_ID"
  /// The variables to set before CUDA starts, CUDA_DEVICE_ORDER first (`export` takes them as
  /// NAME=VALUE); empty when ok.
  std::vector<std::pair<std::string, std::string>> fix_variables() const;
  /// "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=..." (fix_variables as assignments).
  std::string fix_assignments() const;
};

/// Compares `env`'s visible GPUs with `specs` (nvidia-smi indices, UUIDs or unique prefixes,
/// MIG UUIDs, PCI bus ids).  With `prefix` only cuda:0..n-1 must match.  Error(kExitUsage) for
/// a spec that names no GPU or several, or for no spec at all.
/// The UUIDs `specs` name, in order (each spec may hold several, comma-separated).
/// Error(kExitUsage) for a spec that names no GPU or several, for no GPU at all, or a GPU twice.
std::vector<std::string> expected_uuids(const Snapshot& s, const std::vector<std::string>& specs);

/// Compares `mapping`'s cuda:0.. with `expected` (UUIDs): what verify_gpus does once the
/// mapping is known (the library passes the live one when CUDA runs in its process).
Verification verify_mapping(const Snapshot& s, Mapping mapping, std::vector<std::string> expected, bool prefix);

Verification verify_gpus(Session& session, const Environment& env, const std::vector<std::string>& specs,
                         bool prefix, bool probe);

}  // namespace gpumap
