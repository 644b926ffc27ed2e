// Launcher rules: what torchrun, MPI, Slurm, an MPS client setup and `gpumap bind` put in the
// environment, against the GPUs this process sees.  A local rank is a process number, not a GPU.
#include <algorithm>

#include "findings/rank_rules.h"
#include "findings/rule_table.h"
#include "model/text.h"
#include "model/uuid.h"
#include "resolve/launch_env.h"

namespace gpumap {
namespace {

std::string cuda_sees(const RuleInput& r);

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

// Slurm's per-task binding (--gpus-per-task, --gpu-bind=single:N or map_gpu, a device cgroup per
// task): this task sees fewer GPUs than the step has on this node (SLURM_GPUS_ON_NODE), its own
// from cuda:0.  The local rank that decides is Slurm's (or a launcher's under srun with the same
// value, as srun --mpi=pmi2 gives).  nullopt: not bound per task.
std::optional<uint32_t> per_task_gpus(const RuleInput& r) {
  const LocalRank* rank = r.launch.rank();
  if (r.bound || !rank || r.v.error != CudaInitError::kNone || !r.launch.slurm_gpus_on_node || r.v.uuids.empty() ||
      r.v.uuids.size() >= *r.launch.slurm_gpus_on_node)
    return std::nullopt;
  // Slurm binds per task by giving the task a share of the step's GPUs in SLURM_STEP_GPUS (or
  // SLURM_JOB_GPUS in a batch step) too (../shared/reference/slurm-observed.md: task 1 of
  // `srun -n 2 --gpus-per-task=1` has SLURM_STEP_GPUS=1).  Where Slurm's list still holds every GPU
  // of the node, this task's narrower CUDA_VISIBLE_DEVICES was set after Slurm (an export, a
  // script): not Slurm's binding, and local-rank-exceeds-visible says it.
  const std::optional<IntList>& given = r.launch.slurm_step_gpus ? r.launch.slurm_step_gpus : r.launch.slurm_job_gpus;
  if (given && given->error.empty() && given->values.size() >= *r.launch.slurm_gpus_on_node) return std::nullopt;
  if (rank->variable != "SLURM_LOCALID") {
    auto slurm = std::find_if(r.launch.local_ranks.begin(), r.launch.local_ranks.end(),
                              [](const LocalRank& l) { return l.variable == "SLURM_LOCALID"; });
    if (slurm == r.launch.local_ranks.end() || slurm->value != rank->value) return std::nullopt;
  }
  return static_cast<uint32_t>(r.v.uuids.size());
}

// Every task sees only its own GPU(s), from cuda:0: set_device(local_rank) fails on every task whose
// rank is not below that count (issue 52: doctor stayed at info and suggested cuda:$SLURM_LOCALID).
void slurm_per_task_binding(const RuleInput& r, Report& report) {
  std::optional<uint32_t> mine = per_task_gpus(r);
  if (!mine) return;
  const LocalRank& rank = *r.launch.rank();
  const uint32_t on_node = *r.launch.slurm_gpus_on_node;
  const std::string own = *mine == 1 ? "cuda:0" : "cuda:0..cuda:" + std::to_string(*mine - 1);
  const std::string fails =
      *rank.value >= *mine
          ? "so torch.cuda.set_device(" + rank.variable + ") / cuda:$" + rank.variable + " fails here (" + rank.variable + "=" +
                std::to_string(*rank.value) + ": invalid device ordinal)"
          : "so torch.cuda.set_device(" + rank.variable + ") / cuda:$" + rank.variable + " works here only because " +
                rank.variable + "=" + std::to_string(*rank.value) + "; it fails on every task whose local rank is " +
                std::to_string(*mine) + " or more (invalid device ordinal)";
  report.add(Severity::kWarning,
             "Slurm bound GPUs per task (--gpus-per-task, --gpu-bind=single:N or map_gpu, or a device cgroup per task): "
             "this task sees " + std::to_string(*mine) + " of the step's " + std::to_string(on_node) +
                 " GPU(s) on this node (SLURM_GPUS_ON_NODE=" + std::to_string(on_node) + "), its own as " + own + " (" +
                 cuda_sees(r) + "), " + fails,
             "",
             "in the program use " + own + " (torch.cuda.set_device(0)), or int(os.environ[\"" + rank.variable +
                 "\"]) % torch.cuda.device_count(); or give every task all the node's GPUs (srun --gpus-per-node=" +
                 std::to_string(on_node) + " instead of --gpus-per-task, no --gpu-bind) and keep cuda:$" + rank.variable);
}

void local_rank_exceeds_visible(const RuleInput& r, Report& report) {
  const LocalRank* rank = r.launch.rank();
  if (r.bound || !rank || r.v.error != CudaInitError::kNone || *rank->value < r.v.uuids.size()) return;
  // Slurm's per-task binding (--gpus-per-task, --gpu-bind=single/map_gpu) gives each task fewer GPUs
  // than the node's share (SLURM_GPUS_ON_NODE): task 1 rightly sees only its own cuda:0.
  if (per_task_gpus(r)) return;  // slurm-per-task-binding says it, with the fixes that work there
  // More ranks on this node than GPUs (torch.distributed.launch's --nproc-per-node 4 on three GPUs):
  // no per-rank CUDA_VISIBLE_DEVICES (gpumap bind) gives four ranks three GPUs of their own; the
  // launcher's count is the fix.  The ranks per node when known (LOCAL_WORLD_SIZE, or WORLD_SIZE
  // on one node); else at least this rank + 1.
  const size_t visible = r.v.uuids.size();
  std::optional<std::pair<uint32_t, std::string>> on_node = r.launch.ranks_on_node();
  const uint32_t needed = on_node && on_node->first > *rank->value ? on_node->first : *rank->value + 1;
  const std::string ranks = on_node && on_node->first > *rank->value
                                ? std::to_string(on_node->first) + " ranks on this node (" + on_node->second + ")"
                                : "at least " + std::to_string(needed) + " ranks on this node";
  // gpumap bind gives each rank its own GPU only where the node has one per rank: the GPUs this
  // process may open (its allocation's, when Slurm gave one).
  const size_t usable = r.alloc.restricts ? r.alloc.uuids.size() : r.s.gpus.size();
  std::string note;
  if (visible == 0)
    note = "make GPUs visible to the job first (gpumap doctor without the launcher says why none is)";
  else if (needed <= usable && visible < usable)
    note = "start each rank under gpumap bind (gpumap bind -- <your command>): it gives each rank its own GPU of the " +
           std::to_string(usable) + " here; or start no more ranks per node than visible GPUs (" +
           ranks_per_node_knob(rank->variable, visible) + ")";
  else
    note = "start no more ranks per node than GPUs: " + ranks_per_node_knob(rank->variable, visible) +
           " (torch.distributed.launch takes --nproc-per-node too), or make as many GPUs visible as ranks; "
           "`gpumap bind` cannot give more ranks than GPUs a GPU of their own";
  report.add(Severity::kError,
             rank->variable + "=" + std::to_string(*rank->value) + " but this process sees only " + std::to_string(visible) +
                 " GPU(s): cuda:{" + rank->variable + "} does not exist (each rank sees the same list; " + ranks +
                 " need as many visible GPUs, one per rank)",
             "", note);
}

std::string assuming(const Snapshot& s) {
  return " (assuming Slurm's GPU id k is the k-th /dev/nvidiaN, as with gres.conf `File=/dev/nvidia[0-" +
         std::to_string(s.gpus.empty() ? 0 : s.gpus.size() - 1) + "]`; `scontrol show job -d $SLURM_JOB_ID` shows the real IDX)";
}

/// The allocation in words: "SLURM_STEP_GPUS=2,3 gives this step nvidia-smi GPU(s) 2, 3 (assuming ...)".
std::string allocation_said(const RuleInput& r) {
  std::vector<std::string> here;
  for (const std::string& u : r.alloc.uuids) here.push_back(std::to_string(r.s.nvml_index_of(u)));
  return r.alloc.setting() + " gives this " + (r.alloc.variable == "SLURM_STEP_GPUS" ? "step" : "job") +
         " nvidia-smi GPU(s) " + join(here, ", ") +
         (r.alloc.reading == SlurmIdReading::kPositions ? assuming(r.s) : std::string(" (the GPUs whose /dev/nvidiaN has those numbers)"));
}

/// The visible GPUs outside the allocation, as "cuda:N = nvidia-smi GPU M (...)".
std::vector<std::string> outside(const RuleInput& r) {
  std::vector<std::string> out;
  for (size_t i = 0; i < r.v.uuids.size(); ++i)
    if (!r.alloc.allows(r.s, r.v.uuids[i])) out.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(r.v.uuids[i]));
  return out;
}

std::string cuda_sees(const RuleInput& r) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < r.v.uuids.size(); ++i) parts.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(r.v.uuids[i]));
  return join(parts, ", ");
}

// Slurm's GPU ids are node-global; CUDA numbers the GPUs CUDA_VISIBLE_DEVICES lists from 0.  Said
// only where it is all there is to say: a visible GPU outside the allocation is outside-allocation,
// ids copied into CUDA_VISIBLE_DEVICES under a device cgroup are slurm-global-id-as-index.
void slurm_global_ids(const RuleInput& r, Report& report) {
  const Allocation& a = r.alloc;
  if (a.variable.empty() || !r.v.visible_set || r.bound || r.v.error != CudaInitError::kNone || written_in_outer_numbers(r))
    return;  // bound: bound-rank says it
  std::string said = a.setting() + " are node-global Slurm ids, not CUDA ordinals";
  if (a.reading == SlurmIdReading::kUnknown) {
    said += "; they cannot be placed among this process's " + std::to_string(r.s.gpus.size()) +
            " GPU(s) (a device cgroup, or a gres.conf in another order than the minor numbers): CUDA_VISIBLE_DEVICES=" +
            r.cvd + " gives " + cuda_sees(r);
  } else if (!a.restricts) {
    // A device cgroup: this process can open only its allocation, and CUDA numbers what it can open.
    said += "; a device cgroup leaves this process only those " + std::to_string(r.s.gpus.size()) +
            " GPU(s), and CUDA_VISIBLE_DEVICES=" + r.cvd + " gives " + cuda_sees(r);
  } else {
    if (!outside(r).empty()) return;
    said += " (" + allocation_said(r) + "): CUDA numbers the GPUs CUDA_VISIBLE_DEVICES=" + r.cvd + " lists from 0, " + cuda_sees(r);
  }
  bool beyond = false;
  for (uint32_t id : a.ids) beyond |= id >= r.v.uuids.size();
  // cuda:$SLURM_LOCALID only where every task sees the step's GPUs: with one GPU per task (per-task
  // binding, or a single visible GPU) it fails on every task but 0.
  const bool per_task = r.v.uuids.size() <= 1 || per_task_gpus(r);
  report.add(Severity::kInfo, said + ". Never use these ids as cuda:N" + (beyond ? ": some of them do not exist as cuda:N here" : ""),
             "", "in the program use " + (r.v.uuids.size() <= 1 ? std::string("cuda:0") : "cuda:0..cuda:" + std::to_string(r.v.uuids.size() - 1)) +
                     (per_task ? " (this task's own GPUs, whatever its SLURM_LOCALID; never cuda:$SLURM_LOCALID here)"
                               : " (or cuda:$SLURM_LOCALID for one GPU per task)"));
}

// CUDA_VISIBLE_DEVICES set, no device cgroup: CUDA would use a GPU the step was not given.
void outside_allocation(const RuleInput& r, Report& report) {
  if (!r.alloc.restricts || !r.v.visible_set || r.bound || r.v.error != CudaInitError::kNone) return;
  std::vector<std::string> out = outside(r);
  if (out.empty()) return;
  // The fix keeps the allocated GPUs the list names (meant_fix leaves the others out, or gives the
  // allocation when none is left), so it agrees with every other fix of the run.
  report.add(Severity::kError,
             allocation_said(r) + ", but CUDA_VISIBLE_DEVICES=" + r.cvd + " makes CUDA use " + join(out, ", ") +
                 ": outside the allocation (another job's GPU; without a device cgroup nothing stops it)",
             meant_fix(r, CvdForm::kIndex));
}

// CUDA_VISIBLE_DEVICES unset: CUDA sees every GPU this process can open, not only the allocation.
void slurm_gpus_not_applied(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  const Allocation& a = r.alloc;
  if (a.variable.empty() || v.visible_set || v.error != CudaInitError::kNone) return;
  if (a.reading == SlurmIdReading::kCgroup || a.reading == SlurmIdReading::kUnknown) {
    // Ids beyond this process's GPUs: a device cgroup renumbered them; only the count can be checked.
    if (v.uuids.size() > a.ids.size())
      report.add(Severity::kWarning,
                 a.setting() + " allocates " + std::to_string(a.ids.size()) +
                     " GPU(s), but CUDA_VISIBLE_DEVICES is unset and CUDA sees " + std::to_string(v.uuids.size()) +
                     ": cuda:" + std::to_string(a.ids.size()) + " and above are GPUs outside the allocation",
                 "", "set CUDA_VISIBLE_DEVICES to the allocated GPUs (`scontrol show job -d $SLURM_JOB_ID` lists them; "
                     "gpumap which GPU... prints the line); srun sets it when the step asks for GPUs: srun --gpus=N");
    return;
  }
  if (!a.restricts) return;  // every GPU CUDA can see is the allocation's
  std::vector<std::string> out = outside(r);
  if (out.empty()) return;
  std::vector<std::string> here;
  for (const std::string& u : a.uuids) here.push_back(std::to_string(r.s.nvml_index_of(u)));
  report.add(Severity::kWarning,
             a.setting() + " allocates nvidia-smi GPU(s) " + join(here, ", ") +
                 (a.reading == SlurmIdReading::kPositions ? assuming(r.s) : std::string()) +
                 ", but CUDA_VISIBLE_DEVICES is unset, so CUDA sees every GPU: " + join(out, ", ") +
                 (out.size() == 1 ? " is" : " are") + " outside the allocation (another job's GPUs)",
             "export " + launch_visibility(r.s, cuda_devices_of(r.s, a.uuids), CvdForm::kIndex).assignments());
}

// torchrun: LOCAL_WORLD_SIZE processes on this node, one GPU each by convention.
void world_size_exceeds_visible(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  // LOCAL_WORLD_SIZE, else WORLD_SIZE when MASTER_ADDR is loopback (torch.distributed.launch on one
  // node sets no LOCAL_WORLD_SIZE in older releases).
  std::optional<std::pair<uint32_t, std::string>> world = r.launch.ranks_on_node();
  if (r.bound || !world || v.error != CudaInitError::kNone || world->first <= v.uuids.size() || per_task_gpus(r))
    return;
  const LocalRank* rank = r.launch.rank();
  const std::string var = rank ? rank->variable : "LOCAL_RANK";
  report.add(Severity::kError,
             world->second + ": " + std::to_string(world->first) + " processes on this node, but " +
                 (v.visible_set ? "CUDA_VISIBLE_DEVICES=" + r.cvd + " leaves " : std::string("this host has ")) +
                 std::to_string(v.uuids.size()) + " GPU(s): ranks " + std::to_string(v.uuids.size()) + ".." +
                 std::to_string(world->first - 1) + " fail at torch.cuda.set_device(" + var + ") (invalid device ordinal)",
             "", "start as many processes as GPUs (" + ranks_per_node_knob(var, v.uuids.size()) +
                     "; torch.distributed.launch takes --nproc-per-node too), or list " + std::to_string(world->first) +
                     " GPUs in CUDA_VISIBLE_DEVICES" +
                     (world->first > r.s.gpus.size() ? "; `gpumap bind` cannot give more ranks than GPUs a GPU of their own"
                                                     : std::string()));
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
      {"slurm-per-task-binding", slurm_per_task_binding},
      {"slurm-global-ids", slurm_global_ids},
      {"outside-allocation", outside_allocation},
      {"slurm-gpus-not-applied", slurm_gpus_not_applied},
      {"world-size-exceeds-visible", world_size_exceeds_visible},
      {"mps-index-entries", mps_index_entries},
  };
  return table;
}

}  // namespace gpumap
