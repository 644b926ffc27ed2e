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
#include "resolve/allocation.h"
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
  /// The allowed set (resolve/allocation.h): a Slurm step's or job's GPUs.  Every fix keeps to it.
  Allocation alloc = {};
  /// On a host with a GPU in MIG mode, index entries that read as nvidia-smi numbers would name
  /// other devices than CUDA gives: every index entry is below nvidia-smi's GPU count and one of
  /// them lands on a device that is not (a slice of) that nvidia-smi GPU.  Under MIG an index counts
  /// CUDA devices (MIG slices and whole GPUs), in any CUDA_DEVICE_ORDER, so no order helps: the one
  /// finding about it (mig-index-entries) gives both readings, and every fix of the run reads such
  /// entries as nvidia-smi's GPUs by UUID (their MIG devices for a GPU in MIG mode), as `which` does.
  bool mig_indices = false;
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
const std::vector<Rule>& layer_rules();     // where layers meet: outer numbers in a container or a Slurm step (layer_rules.cc)
const std::vector<Rule>& launcher_rules();  // torchrun, MPI, Slurm, MPS, gpumap bind (launcher_rules.cc)
const std::vector<Rule>& framework_rules(); // torch, vLLM/NVML lookups, Ray, minor numbers (framework_rules.cc)

// gpus_hidden_on_purpose (model/cuda_view.h): one blank or negative entry, no GPU on purpose.

/// The GPUs CUDA_VISIBLE_DEVICES most likely meant, in its order, each once: every entry read
/// alone in `meant_order`, as its text spells it (a UUID without `GPU-`, a PCI address, `gpu-`,
/// white space before `GPU-`, `0;1`, `1.5`, `+1` and an entry after the list was cut included);
/// entries that name no GPU whatever their spelling (`-1`, `9` on four GPUs, `all`) are left out.
std::vector<std::string> meant_gpus(const RuleInput& r);

/// `export ...` that gives exactly the meant GPUs in `form`; without one, as UUIDs when the list
/// was written with UUIDs (or a GPU has no index), else as PCI_BUS_ID indices; "" when the list
/// names no GPU.  Only GPUs of the allocation (r.alloc): the others are left out, said in a shell
/// comment, and when none is left the allocation's GPUs are given instead.
std::string meant_fix(const RuleInput& r, std::optional<CvdForm> form = std::nullopt, bool say_gives = false);

/// What CUDA shows for these whole GPUs: a GPU in MIG mode shows its MIG devices in its place.
std::vector<std::string> cuda_devices_of(const Snapshot& s, const std::vector<std::string>& gpus);

/// The GPUs meant_fix gives: meant_gpus within the allocation, or the allocation's GPUs when none of
/// them is in it; `left_out` (when given) says what was left out, in words ("" when nothing).
std::vector<std::string> meant_allowed(const RuleInput& r, std::string* left_out = nullptr);

/// " # cuda:0 = nvidia-smi GPU 1, cuda:1 = ..." for a fix that gives `uuids` (a comment a shell
/// ignores: the fix says which GPUs it gives).
std::string gives_comment(const Snapshot& s, const std::vector<std::string>& uuids);

/// The number here of the GPU whose outer number is `n`: inside a container the host's nvidia-smi
/// index (`3` under NVIDIA_VISIBLE_DEVICES=2,3 is the container's GPU 1), in a Slurm step whose
/// device cgroup renumbered its GPUs Slurm's global id (SLURM_STEP_GPUS=4,5: id 4 is GPU 0 here);
/// nullopt when no GPU here has that outer number.
std::optional<uint32_t> outer_number_here(const RuleInput& r, uint64_t n);

/// "the host's number" / "Slurm's global id": what an outer number is here; "" when there is none.
std::string outer_number_kind(const RuleInput& r);

/// Every index entry of CUDA_VISIBLE_DEVICES is an outer number (outer_number_here) of a GPU here,
/// and read so the list names other GPUs than read as this process's numbers (or reaches past
/// them): the list was written in the outer numbering (the host's nvidia-smi numbers copied into a
/// container, a step's SLURM_STEP_GPUS copied into CUDA_VISIBLE_DEVICES under a device cgroup).
/// Every fix then reads the entries that way.
bool written_in_outer_numbers(const RuleInput& r);

/// An index entry as an outer number: the GPU's number here when the entry is past this process's
/// GPUs (or the whole list was written_in_outer_numbers) and some GPU here has it as its outer
/// number (`3` under NVIDIA_VISIBLE_DEVICES=2,3: 1; `4` under SLURM_STEP_GPUS=4,5 and a device
/// cgroup: 0); nullopt otherwise.
std::optional<uint32_t> outer_number_of_entry(const RuleInput& r, const CvdEntry& e);

/// outer_number_of_entry inside a container only (the host's number).
std::optional<uint32_t> container_number_of_host_index(const RuleInput& r, const CvdEntry& e);

/// The CUDA devices nvidia-smi GPU `nvml_index` stands for: its MIG devices when it is in MIG mode
/// with instances, else the GPU; empty when there is no such GPU.  The reading `which` takes.
std::vector<std::string> nvidia_smi_reading(const Snapshot& s, uint64_t nvml_index);

/// True when some CUDA_VISIBLE_DEVICES entry is an index (those count in CUDA's order).
bool has_index_entries(const CudaView& v);

}  // namespace gpumap
