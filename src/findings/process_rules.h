// Rules about the calling process itself (the library's diagnose(), verify() and devices()):
// what CUDA really uses here against what the environment says now, where this process holds
// GPU memory, and where its model sits.  Pure: every fact comes in as a value (driver/live_cuda.h
// and NVML read them, session/diagnose.h gathers them).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "env/environment.h"
#include "model/finding.h"
#include "model/mapping.h"
#include "model/snapshot.h"

namespace gpumap {

/// What CUDA in this process is, and what its environment says.
struct ProcessCudaFacts {
  Environment now;                    // the environment now (a library call sees os.environ's writes)
  std::optional<Environment> start;   // the environment the process started with; nullopt: unknown
  std::vector<std::string> command;   // its command line (for a relaunch fix); empty: unknown
  bool live = false;                  // CUDA already runs here: `mapping` is the driver's answer
  Mapping mapping;                    // cuda:N as they are (live) or will be (predicted)
  std::optional<Mapping> predicted;   // live only: what the environment now predicts
  std::string predicted_error;        // live only: why no prediction could be made ("" when made)
};

/// set-too-late (error): CUDA runs here with other GPUs than the environment now names.  It
/// names the values now and at start, what cuda:0.. really are, and a fix that works now: the
/// command relaunched with the variables on its line (nothing set in this process helps).
std::optional<Finding> set_too_late(const Snapshot& s, const ProcessCudaFacts& f);

/// What diagnose() was told about the program (duck-typed from a torch model by the Python
/// package) and what NVML says this process holds.
struct ProgramFacts {
  std::optional<int> current_device;                 // torch.cuda.current_device(), when CUDA runs
  std::map<std::string, uint64_t> tensor_devices;    // "cuda:0" / "cpu" / "meta" -> tensors there
  std::optional<std::map<std::string, std::string>> hf_device_map;  // module -> "0", "cuda:1", "cpu", "disk"
  std::map<std::string, std::string> max_memory;     // as given to from_pretrained, for the message
  bool memory_known = false;                         // NVML's process lists could be read and joined
  std::map<std::string, uint64_t> memory_mib;        // UUID -> MiB this process holds there
};

/// The CUDA ordinal a device string names ("3", "cuda:3", "cuda" -> 0), nullopt for cpu/disk/meta
/// and anything else.
std::optional<size_t> device_ordinal(const std::string& device);

/// What every program rule reads: the facts, and what the rules share, derived once.
struct ProgramInput {
  const Snapshot& s;
  const std::vector<std::string>& visible;  // cuda:N -> UUID, as the mapping has them
  const Environment& now;
  const ProgramFacts& p;
  std::set<size_t> model_ordinals = {};     // the cuda:N the model's tensors and device map name
  size_t modules = 0, offloaded_cpu = 0, offloaded_disk = 0;  // the device map's modules, and those on cpu/disk
};

/// A rule's words when it fires: the message and its note (advice that is code, not a command:
/// these findings have no fix to paste).
struct RuleVerdict {
  std::string message, note;
};

/// One rule about the program: its id (docs/findings.md), its severity, and its check (the
/// condition and the words; nullopt when it does not fire).  Adding a rule is one row and its test.
struct ProgramRule {
  const char* id;
  Severity severity;
  std::optional<RuleVerdict> (*check)(const ProgramInput&);
};

/// Every program rule, in the order its findings are reported.
const std::vector<ProgramRule>& program_rules();

/// The findings of program_rules() for this process, judged against `visible` (cuda:N -> UUID, as
/// the mapping has them).
std::vector<Finding> program_findings(const Snapshot& s, const std::vector<std::string>& visible,
                                      const Environment& now, const ProgramFacts& p);

}  // namespace gpumap
