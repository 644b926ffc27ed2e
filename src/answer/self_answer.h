// What a program asks the library about its own process (session/self.h computes these;
// output/self_view.h writes their JSON; the C API and the Python package over it only pass them
// on): the devices it gets, whether they are the expected ones, where named GPUs are, and the
// GPUs it leased.  Each answer is complete: a refusal carries the code, message and hint every
// front end reports, and the facts beside them.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "answer/verify_answer.h"    // Refusal, VerifyAnswer
#include "env/launcher.h"            // LocalDevice
#include "findings/process_rules.h"  // ProcessCudaFacts
#include "model/finding.h"
#include "model/mapping.h"
#include "model/snapshot.h"
#include "resolve/gpu_selector.h"

namespace gpumap {

/// devices(): cuda:0.. of this process.
struct DevicesAnswer {
  const Snapshot* snapshot = nullptr;  // the session's (valid while it lives); null without a driver
  bool live = false;                   // CUDA runs here: `mapping` is the driver's own answer
  Mapping mapping;
  GpuPlace where;                      // outer numbers (a container's host indices, Slurm ids)
  std::vector<Finding> findings;       // as doctor gives them; set-too-late once CUDA runs here
  /// No NVIDIA driver here and CUDA_VISIBLE_DEVICES hides every GPU on purpose: the empty list
  /// is the answer, and this says why there is no order ("" otherwise).
  std::string no_driver;
  std::optional<Refusal> refusal;      // CUDA would fail (kExitCudaWouldFail)
};

/// local_device(): which cuda:N this process, one rank of a launcher or a lone one, should use
/// (env/launcher.h's choose_local_device on the GPUs it sees).
struct LocalDeviceAnswer {
  bool live = false;      // the GPUs counted are the driver's own (CUDA runs here)
  size_t visible = 0;     // the GPUs this process sees
  LocalDevice choice;     // the ordinal, the rank that decided it, why; or why none (code, message, hint)
  std::optional<Refusal> refusal;  // choice's refusal, or CUDA would fail (devices())
};

/// check_devices(): device_map values and max_memory keys read as CUDA ordinals of this process,
/// each checked against the GPUs it sees (session/self.h's DeviceItem says what each one is).
struct DeviceItemsAnswer {
  bool live = false;
  std::vector<std::optional<uint32_t>> cuda_ordinals;  // per item; nullopt: a place (cpu, disk) or a physical key
  /// Why not: kExitUsage for a value that is no device or a "cuda:N" max_memory key (refused_as
  /// "value"), or a cuda:N this process does not have ("not-visible", refused_ordinal); CUDA
  /// failing as devices().
  std::optional<Refusal> refusal;
  std::string refused_as;
  std::optional<uint32_t> refused_ordinal;
};

// verify(): answer/verify_answer.h (the CLI's `verify` gives the same answer).

/// locate(): where named GPUs are in this process.
/// A GPU named physically, and where it is in this environment.
struct LocatedGpu {
  std::string spec;                    // as given
  std::string uuid;                    // what it names (GPU or MIG device)
  uint32_t nvml_index = 0;
  std::optional<size_t> cuda_ordinal;  // nullopt: not visible here
};
struct LocateAnswer {
  bool live = false;
  std::vector<LocatedGpu> gpus;
  std::string cuda_visible_devices;    // the value that gives exactly these GPUs, in order (UUIDs)
  std::vector<Finding> findings;
};

/// One cuda:N with the GPU's identity (a MIG device: its parent GPU's index and PCI bus id, its
/// own name).  The JSON of a device is output/json_view.h's cuda_device_json, not this.
struct VisibleDevice {
  size_t cuda_ordinal = 0;                    // N in cuda:N
  std::optional<uint32_t> nvml_index;    // the nvidia-smi index (a MIG device's: its GPU's)
  std::string uuid;                      // "GPU-..." or "MIG-..."
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> name;
};

/// The five-step check (G2 section 5.1) in one: the variables now and at start, how many GPUs CUDA
/// sees of how many exist, the model's devices as physical GPUs, this process's memory per GPU
/// from NVML, and every finding with its fix.
struct Diagnosis {
  ProcessCudaFacts cuda;
  std::vector<VisibleDevice> devices;  // cuda:0.. (empty when CUDA fails or sees none)
  size_t host_gpus = 0;                // GPUs NVML lists
  ProgramFacts program;                // as given, with memory_mib/memory_known filled from NVML
  std::vector<uint32_t> unlisted_gpus; // GPUs whose process lists NVML could not read
  std::vector<Finding> findings;
  uint32_t pid = 0;                    // the process diagnosed
  GpuPlace where;                      // outer numbers of `devices`
  const Snapshot* snapshot = nullptr;  // the session's (valid while it lives)
};

/// pin(): the GPUs picked and leased for this process, and what to set for them.
struct PinAnswer {
  const Snapshot* snapshot = nullptr;
  std::vector<std::string> uuids;                              // cuda:0 first
  std::string lease_dir;
  Mapping mapping;                                             // what the program will see
  GpuPlace where;
  std::vector<std::pair<std::string, std::string>> environment;  // to set in the program, in order
};

}  // namespace gpumap
