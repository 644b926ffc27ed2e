// The library's operations on its calling process (libgpumap.so's devices, verify, locate, pin;
// diagnose is session/diagnose.h): each reads what it needs and returns the whole answer
// (answer/self_answer.h), refusals included, so the C API only parses arguments and writes JSON.
#pragma once
#include <string>
#include <vector>

#include "answer/self_answer.h"
#include "resolve/picker.h"
#include "session/lease_gpus.h"
#include "session/session.h"

namespace gpumap {

/// cuda:0.. of this process: live when CUDA runs here, else predicted from session.env().
/// Errors (Error) only for what stops any answer: no driver (unless the environment hides every
/// GPU on purpose), a driver that does not answer.
DevicesAnswer devices_here(Session& session);

/// Whether cuda:0.. are exactly `specs` (nvidia-smi indices, UUIDs or prefixes, MIG UUIDs, PCI bus
/// ids); with `prefix` only the first n must be.  Error(kExitUsage) for a spec that names no GPU or
/// several.
VerifyAnswer verify_here(Session& session, const std::vector<std::string>& specs, bool prefix);

/// Where each spec's GPU is in this process.  Same errors as verify_here.
LocateAnswer locate_here(Session& session, const std::vector<std::string>& specs);

/// Picks and leases GPUs for this process (lease_gpus; `held` gets the leases, which the caller
/// keeps until it releases them) and says what to set in it: UUIDs, which no renumbering can move.
/// Throws what lease_gpus throws.
PinAnswer pin_here(Session& session, const PickRequest& request, const LeaseOptions& options, LeasedGpus& held);

}  // namespace gpumap
