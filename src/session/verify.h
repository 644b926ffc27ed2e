// verify: are cuda:0, cuda:1, ... exactly the expected physical GPUs, in order?
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "answer/verify_answer.h"
#include "session/session.h"

namespace gpumap {

/// The UUID `spec` names: a MIG device's UUID (or a unique prefix of one, "MIG-" included)
/// names that MIG device; anything else is read as select_one_gpu reads it.  Same errors.
std::string expected_uuid(const Snapshot& s, const std::string& spec);

/// The CUDA_VISIBLE_DEVICES value that gives exactly these UUIDs as cuda:0, cuda:1, ...: a GPU
/// in MIG mode is seen through its MIG devices.
std::string cvd_uuid_form(const Snapshot& s, const std::vector<std::string>& uuids);


/// The UUIDs `specs` name, in order (each spec may hold several, comma-separated).
/// Error(kExitUsage) for a spec that names no GPU or several, for no GPU at all, or a GPU twice.
std::vector<std::string> expected_uuids(const Snapshot& s, const std::vector<std::string>& specs);

/// Compares `mapping`'s cuda:0.. with `expected` (UUIDs): what verify_gpus does once the
/// mapping is known (the library passes the live one when CUDA runs in its process, and makes
/// the refusal a relaunch).  The refusal, when not ok, says to set `fix` before CUDA starts.
VerifyAnswer verify_mapping(const Snapshot& s, Mapping mapping, std::vector<std::string> expected, bool prefix);

/// `gpumap verify --expect`: compares `env`'s visible GPUs (as `probe` says, or predicted) with
/// `specs` (nvidia-smi indices, UUIDs or unique prefixes, MIG UUIDs, PCI bus ids).  With `prefix`
/// only cuda:0..n-1 must match.  Error(kExitUsage) for a spec that names no GPU or several, or
/// for no spec at all.
VerifyAnswer verify_gpus(Session& session, const Environment& env, const std::vector<std::string>& specs,
                         bool prefix, bool probe);

}  // namespace gpumap
