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

/// Which cuda:N this process should use as one rank of its launcher (choose_local_device on
/// devices_here's GPUs and session.env()'s launcher variables).  Errors as devices_here.
LocalDeviceAnswer local_device_here(Session& session);

/// One device a caller names: a device_map value (kValue), a max_memory key in CUDA ordinals
/// (kKey: also refused as "cuda:N", which accelerate refuses), or a max_memory key in nvidia-smi
/// numbers (kPhysicalKey: only that refusal).  The front end names it in its own words.
struct DeviceItem {
  enum class Role { kValue, kKey, kPhysicalKey };
  Role role = Role::kValue;
  std::optional<int64_t> number;  // an int
  std::string text;               // else its text ("cuda:1", "cpu"; torch.device("cuda:1") as text)
  std::string what;               // "device_map['lm_head']": a refused value
  std::string where;              // "device_map['lm_head'] = 'cuda:9'": an ordinal not here ("": what)
  std::string shown;              // the value as the caller writes it: 'cuda:9', 3
};

/// Reads each item (env/device_value.h) and checks its ordinal against devices_here's GPUs, in
/// order: the first refusal is the answer's (a not-visible ordinal names the cuda:N meant when
/// it is a visible GPU's nvidia-smi index).  devices_here is asked only when an item is a GPU.
DeviceItemsAnswer check_devices_here(Session& session, const std::vector<DeviceItem>& items);

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
