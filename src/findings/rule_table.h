// The frame every rule of diagnose() shares: what a rule reads (RuleInput), how it reports
// (Report), and the id -> rule tables of the three rule files.  A new finding is one row in one
// table, its function beside it, its test and its line in docs/findings.md.
// Internal to findings/: callers use findings/rules.h.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/launcher.h"
#include "findings/rules.h"
#include "resolve/launch_env.h"

namespace gpumap {

struct RuleInput {
  const DiagnosisInput& in;
  const Snapshot& s;
  const CudaView& v;
  const LauncherEnv& launch;
  bool hidden;      // CUDA_VISIBLE_DEVICES hides every GPU on purpose (gpus_hidden_on_purpose)
  bool bound;       // gpumap bind set CUDA_VISIBLE_DEVICES (bound_by_gpumap)
  std::string cvd;  // CUDA_VISIBLE_DEVICES as set; "" when unset
  /// Index entries that may mean two things: CUDA's order here is not nvidia-smi's and
  /// CUDA_DEVICE_ORDER does not say PCI_BUS_ID, so `1` is CUDA's GPU 1 or nvidia-smi's.  The one
  /// finding about it (visible-devices-without-pci-order) gives both readings; every other fix
  /// takes nvidia-smi's, the reading CUDA_DEVICE_ORDER=PCI_BUS_ID gives.
  bool ambiguous;
  /// The order the fixes read index entries in: nvidia-smi's (PCI) when ambiguous or when
  /// CUDA_DEVICE_ORDER is invalid (its fix is PCI_BUS_ID), else the order CUDA uses.
  std::vector<std::string> meant_order;
  mutable std::optional<std::vector<std::string>> meant;  // meant_gpus, once per diagnosis
  /// Inside a container: each GPU's host nvidia-smi index (resolve/container_view.h host_indices),
  /// in the order of `s.gpus`; empty outside one or when NVIDIA_VISIBLE_DEVICES cannot tell.
  std::vector<uint32_t> host_index = {};
};

/// Adds findings under one rule's id.
class Report {
 public:
  Report(std::vector<Finding>& out, const char* id) : out_(out), id_(id) {}
  void add(Severity severity, std::string message, std::string fix, std::string note = "") {
    out_.push_back({id_, severity, std::move(message), std::move(fix), std::move(note)});
  }

 private:
  std::vector<Finding>& out_;
  const char* id_;
};

/// One rule: its id (docs/findings.md) and the check that reports under it.
struct Rule {
  const char* id;
  void (*check)(const RuleInput&, Report&);
};

const std::vector<Rule>& entry_rules();     // CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER as written (entry_rules.cc)
const std::vector<Rule>& host_rules();      // the host: its order, containers, MIG (host_rules.cc)
const std::vector<Rule>& launcher_rules();  // torchrun, MPI, Slurm, MPS, gpumap bind (launcher_rules.cc)
const std::vector<Rule>& framework_rules(); // torch, vLLM/NVML lookups, Ray, minor numbers (framework_rules.cc)

/// True when CUDA_VISIBLE_DEVICES is one blank or negative entry: no GPU, on purpose.
bool gpus_hidden_on_purpose(const CudaView& v);

/// The GPUs CUDA_VISIBLE_DEVICES most likely meant, in its order, each once: every entry read
/// alone in `meant_order`, as its text spells it (a UUID without `GPU-`, a PCI address, `gpu-`,
/// white space before `GPU-`, `0;1`, `1.5`, `+1` and an entry after the list was cut included);
/// entries that name no GPU whatever their spelling (`-1`, `9` on four GPUs, `all`) are left out.
std::vector<std::string> meant_gpus(const RuleInput& r);

/// `export ...` that gives exactly the meant GPUs in `form`; without one, as UUIDs when the list
/// was written with UUIDs (or a GPU has no index), else as PCI_BUS_ID indices; "" when the list
/// names no GPU.
std::string meant_fix(const RuleInput& r, std::optional<CvdForm> form = std::nullopt);

/// " # cuda:0 = nvidia-smi GPU 1, cuda:1 = ..." for a fix that gives `uuids` (a comment a shell
/// ignores: the fix says which GPUs it gives).
std::string gives_comment(const Snapshot& s, const std::vector<std::string>& uuids);

/// Inside a container, an index entry past its GPUs that is the host's number of one of them
/// (`3` under NVIDIA_VISIBLE_DEVICES=2,3): that GPU's number here (1); nullopt otherwise.
std::optional<uint32_t> container_number_of_host_index(const RuleInput& r, const CvdEntry& e);

/// True when some CUDA_VISIBLE_DEVICES entry is an index (those count in CUDA's order).
bool has_index_entries(const CudaView& v);

}  // namespace gpumap
