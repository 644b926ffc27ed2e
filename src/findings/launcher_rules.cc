// Launcher rules: what torchrun, MPI, Slurm, an MPS client setup and `gpumap bind` put in the
// environment, against the GPUs this process sees.  A local rank is a process number, not a GPU.
#include <algorithm>

#include "findings/rule_table.h"
#include "model/text.h"
#include "model/uuid.h"
#include "resolve/launch_env.h"

namespace gpumap {
namespace {

void local_rank_invalid(const RuleInput& r, Report& report) {
  for (const LocalRank& rank : r.launch.local_ranks)
    if (!rank.error.empty()) report.add(Severity::kError, rank.error, "");
}

void bound_rank(const RuleInput& r, Report& report) {
  if (!r.bound || r.v.error != CudaInitError::kNone) return;
  const LocalRank* rank = r.launch.rank();
  std::string who = rank ? "local rank " + std::to_string(*rank->value) + " (" + rank->variable + ")" : "this process";
  std::string variable = rank ? rank->variable : "LOCAL_RANK";
  const std::optional<uint32_t>& own = r.launch.bound_own;  // bind --keep-visible: its own GPUs come first
  report.add(Severity::kInfo,
             "gpumap bind gave " + who + " its own GPU(s) (GPUMAP_BOUND matches CUDA_VISIBLE_DEVICES" +
                 (own ? "; --keep-visible: GPUMAP_BOUND_OWN=" + std::to_string(*own) : "") + "): " +
                 bound_rank_advice(variable, own),
             "",
             own ? "in the program: torch.cuda.set_device(0)"
                 : "in the program: torch.cuda.set_device(0), or int(os.environ[\"" + variable +
                       "\"]) % torch.cuda.device_count()");
}

void local_rank_exceeds_visible(const RuleInput& r, Report& report) {
  const LocalRank* rank = r.launch.rank();
  if (r.bound || !rank || r.v.error != CudaInitError::kNone || *rank->value < r.v.uuids.size()) return;
  // Slurm's per-task binding (--gpus-per-task, --gpu-bind=single/map_gpu) gives each task fewer GPUs
  // than the node's share (SLURM_GPUS_ON_NODE): task 1 rightly sees only its own cuda:0.
  if (rank->variable == "SLURM_LOCALID" && r.launch.slurm_gpus_on_node && r.v.uuids.size() < *r.launch.slurm_gpus_on_node)
    return;
  report.add(Severity::kError,
             rank->variable + "=" + std::to_string(*rank->value) + " but this process sees only " +
                 std::to_string(r.v.uuids.size()) + " GPU(s): cuda:{" + rank->variable + "} does not exist (each rank sees "
                 "the same list; one GPU per rank needs as many visible GPUs as ranks, or per-rank CUDA_VISIBLE_DEVICES)",
             "", "start each rank under gpumap bind (gpumap bind -- <your command>): it gives each rank its own GPU");
}

/// The step's GPU ids when set, else the job's; nullptr when neither is a usable list.
const IntList* slurm_ids(const LauncherEnv& launch, std::string& name) {
  bool step = launch.slurm_step_gpus.has_value();
  const std::optional<IntList>& ids = step ? launch.slurm_step_gpus : launch.slurm_job_gpus;
  if (!ids || !ids->error.empty() || ids->values.empty()) return nullptr;
  name = step ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";
  return &*ids;
}

std::string ids_text(const IntList& ids) {
  std::vector<std::string> out;
  for (uint32_t id : ids.values) out.push_back(std::to_string(id));
  return join(out, ",");
}

// Slurm GPU id k as the k-th /dev/nvidiaN by minor number (gres.conf `File=/dev/nvidia[0-N]`, the
// common layout; without minor numbers, nvidia-smi's order).  nullptr when there is no such GPU.
const Gpu* gpu_for_slurm_id(const Snapshot& s, uint32_t id) {
  std::vector<const Gpu*> gpus;
  for (const Gpu& g : s.gpus) gpus.push_back(&g);
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu* a, const Gpu* b) {
    if (a->minor_number && b->minor_number) return *a->minor_number < *b->minor_number;
    return a->nvml_index < b->nvml_index;
  });
  return id < gpus.size() ? gpus[id] : nullptr;
}

/// The GPUs Slurm's ids name here, in the ids' order; empty when an id is past this process's GPUs
/// (a device cgroup renumbered them: the process sees only its allocation).
std::vector<const Gpu*> allocated_gpus(const Snapshot& s, const IntList& ids) {
  std::vector<const Gpu*> out;
  for (uint32_t id : ids.values) {
    const Gpu* g = gpu_for_slurm_id(s, id);
    if (!g) return {};
    out.push_back(g);
  }
  return out;
}

std::string nvidia_smi_numbers(const std::vector<const Gpu*>& gpus) {
  std::vector<std::string> out;
  for (const Gpu* g : gpus) out.push_back(std::to_string(g->nvml_index));
  return join(out, ",");
}

std::string assuming(const Snapshot& s) {
  return " (assuming Slurm's GPU id k is the k-th /dev/nvidiaN, as with gres.conf `File=/dev/nvidia[0-" +
         std::to_string(s.gpus.empty() ? 0 : s.gpus.size() - 1) + "]`; `scontrol show job -d $SLURM_JOB_ID` shows the real IDX)";
}

/// The visible GPUs outside the allocation, as "cuda:N = nvidia-smi GPU M (...)".
std::vector<std::string> outside(const RuleInput& r, const std::vector<const Gpu*>& allocated) {
  std::vector<std::string> out;
  for (size_t i = 0; i < r.v.uuids.size(); ++i)
    if (std::none_of(allocated.begin(), allocated.end(), [&](const Gpu* g) { return same_uuid(g->uuid, r.v.uuids[i]); }))
      out.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(r.v.uuids[i]));
  return out;
}

std::string cuda_sees(const RuleInput& r) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < r.v.uuids.size(); ++i) parts.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(r.v.uuids[i]));
  return join(parts, ", ");
}

// Slurm's GPU ids are node-global; CUDA numbers the GPUs CUDA_VISIBLE_DEVICES lists from 0.  Said
// only where it is all there is to say: a visible GPU outside the allocation is outside-allocation.
void slurm_global_ids(const RuleInput& r, Report& report) {
  std::string name;
  const IntList* ids = slurm_ids(r.launch, name);
  if (!ids || !r.v.visible_set || r.bound || r.v.error != CudaInitError::kNone) return;  // bound: bound-rank says it
  std::vector<const Gpu*> allocated = allocated_gpus(r.s, *ids);
  std::string said = name + "=" + ids_text(*ids) + " are node-global Slurm ids, not CUDA ordinals";
  if (allocated.empty()) {
    // A device cgroup: this process can open only its allocation, and CUDA numbers what it can open.
    said += "; they are past this process's " + std::to_string(r.s.gpus.size()) + " GPU(s), so a device cgroup holds "
            "the allocation and this process sees only those GPUs: CUDA_VISIBLE_DEVICES=" + r.cvd + " gives " + cuda_sees(r);
  } else {
    if (!outside(r, allocated).empty()) return;
    said += " (nvidia-smi GPU(s) " + nvidia_smi_numbers(allocated) + " here" + assuming(r.s) + "): CUDA numbers the GPUs "
            "CUDA_VISIBLE_DEVICES=" + r.cvd + " lists from 0, " + cuda_sees(r);
  }
  bool beyond = false;
  for (uint32_t id : ids->values) beyond |= id >= r.v.uuids.size();
  report.add(Severity::kInfo, said + ". Never use these ids as cuda:N" + (beyond ? ": some of them do not exist as cuda:N here" : ""),
             "", "in the program use cuda:0..cuda:" + std::to_string(r.v.uuids.empty() ? 0 : r.v.uuids.size() - 1) +
                     " (or cuda:$SLURM_LOCALID for one GPU per task)");
}

// CUDA_VISIBLE_DEVICES set, no device cgroup: CUDA would use a GPU the step was not given.
void outside_allocation(const RuleInput& r, Report& report) {
  std::string name;
  const IntList* ids = slurm_ids(r.launch, name);
  if (!ids || !r.v.visible_set || r.bound || r.v.error != CudaInitError::kNone) return;
  std::vector<const Gpu*> allocated = allocated_gpus(r.s, *ids);
  if (allocated.empty()) return;  // a device cgroup: nothing outside it can be opened (slurm-global-ids says what is seen)
  std::vector<std::string> out = outside(r, allocated);
  if (out.empty()) return;
  std::vector<std::string> uuids;
  for (const Gpu* g : allocated) uuids.push_back(g->uuid);
  report.add(Severity::kError,
             name + "=" + ids_text(*ids) + " gives this step nvidia-smi GPU(s) " + nvidia_smi_numbers(allocated) + assuming(r.s) +
                 ", but CUDA_VISIBLE_DEVICES=" + r.cvd + " makes CUDA use " + join(out, ", ") +
                 ": outside the allocation (another job's GPU; without a device cgroup nothing stops it)",
             "export " + launch_visibility(r.s, uuids, CvdForm::kIndex).assignments());
}

// CUDA_VISIBLE_DEVICES unset: CUDA sees every GPU this process can open, not only the allocation.
void slurm_gpus_not_applied(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  const Snapshot& s = r.s;
  std::string name;
  const IntList* ids = slurm_ids(r.launch, name);
  if (!ids || v.visible_set || v.error != CudaInitError::kNone) return;
  std::vector<const Gpu*> gpus = allocated_gpus(s, *ids);
  std::vector<std::string> allocated;
  for (const Gpu* g : gpus) allocated.push_back(g->uuid);
  if (allocated.empty()) {
    // Ids beyond this process's GPUs: a device cgroup renumbered them; only the count can be checked.
    if (v.uuids.size() > ids->values.size())
      report.add(Severity::kWarning,
                 name + "=" + ids_text(*ids) + " allocates " + std::to_string(ids->values.size()) +
                     " GPU(s), but CUDA_VISIBLE_DEVICES is unset and CUDA sees " + std::to_string(v.uuids.size()) +
                     ": cuda:" + std::to_string(ids->values.size()) + " and above are GPUs outside the allocation",
                 "", "set CUDA_VISIBLE_DEVICES to the allocated GPUs (`scontrol show job -d $SLURM_JOB_ID` lists them; "
                     "gpumap which GPU... prints the line); srun sets it when the step asks for GPUs: srun --gpus=N");
    return;
  }
  std::vector<std::string> sorted_now = v.uuids, sorted_alloc = allocated;
  std::sort(sorted_now.begin(), sorted_now.end());
  std::sort(sorted_alloc.begin(), sorted_alloc.end());
  if (sorted_now == sorted_alloc) return;
  std::vector<std::string> out = outside(r, gpus);
  report.add(Severity::kWarning,
             name + "=" + ids_text(*ids) + " allocates nvidia-smi GPU(s) " + nvidia_smi_numbers(gpus) + assuming(s) +
                 ", but CUDA_VISIBLE_DEVICES is unset, so CUDA sees every GPU: " + join(out, ", ") +
                 (out.size() == 1 ? " is" : " are") + " outside the allocation (another job's GPUs)",
             "export " + launch_visibility(s, allocated, CvdForm::kIndex).assignments());
}

// torchrun: LOCAL_WORLD_SIZE processes on this node, one GPU each by convention.
void world_size_exceeds_visible(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  const std::optional<uint32_t>& world = r.launch.local_world_size;
  if (r.bound || !world || v.error != CudaInitError::kNone || *world <= v.uuids.size()) return;
  report.add(Severity::kError,
             "LOCAL_WORLD_SIZE=" + std::to_string(*world) + " processes on this node, but " +
                 (v.visible_set ? "CUDA_VISIBLE_DEVICES=" + r.cvd + " leaves " : std::string("this host has ")) +
                 std::to_string(v.uuids.size()) + " GPU(s): ranks " + std::to_string(v.uuids.size()) + ".." +
                 std::to_string(*world - 1) + " fail at torch.cuda.set_device(LOCAL_RANK) (invalid device ordinal)",
             "", "start as many processes as GPUs (torchrun --nproc-per-node=" + std::to_string(v.uuids.size()) +
                     "), or list " + std::to_string(*world) + " GPUs in CUDA_VISIBLE_DEVICES");
}

// MPS: the MPS server enumerates GPUs itself; clients should name them by UUID.
void mps_index_entries(const RuleInput& r, Report& report) {
  auto pipe = r.in.env.get("CUDA_MPS_PIPE_DIRECTORY");
  if (!pipe || !r.v.visible_set || !has_index_entries(r.v)) return;
  report.add(Severity::kWarning,
             "CUDA_MPS_PIPE_DIRECTORY=" + *pipe + " (an MPS client) with CUDA_VISIBLE_DEVICES indices `" + r.cvd +
                 "`: under MPS the indices count within the GPUs the MPS server was started with, which need not be "
                 "nvidia-smi's or this shell's numbering",
             meant_fix(r, CvdForm::kUuid), meant_fix(r, CvdForm::kUuid).empty() ? "name GPUs by UUID (gpumap which GPU...)" : "");
}

}  // namespace

const std::vector<Rule>& launcher_rules() {
  static const std::vector<Rule> table = {
      {"local-rank-invalid", local_rank_invalid},
      {"bound-rank", bound_rank},
      {"local-rank-exceeds-visible", local_rank_exceeds_visible},
      {"slurm-global-ids", slurm_global_ids},
      {"outside-allocation", outside_allocation},
      {"slurm-gpus-not-applied", slurm_gpus_not_applied},
      {"world-size-exceeds-visible", world_size_exceeds_visible},
      {"mps-index-entries", mps_index_entries},
  };
  return table;
}

}  // namespace gpumap
