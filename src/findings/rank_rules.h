// The rank checks of another process, seen from outside (`gpumap ps` on one host, `gpumap job`
// across a job): a process with a local rank r whose CUDA sees more than r GPUs should work on its
// cuda:r.  One home for both commands (findings/ps_rules.cc and findings/job_rules.cc build the
// facts from their joins); the in-process versions for the library are in findings/process_rules.h
// and mean the same.  Pure: no I/O.  Documented in docs/findings.md and docs/ps.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/finding.h"

namespace gpumap {

/// One GPU a process is listed on (NVML's process list).
struct RankHeld {
  uint32_t nvml_index = 0;
  std::string gpu;                     // in words: "nvidia-smi GPU 1 (GPU-...)" (+ " on node7")
  std::optional<int> cuda_ordinal;          // the cuda:N the process calls it; nullopt: outside its view
  std::optional<uint64_t> used_memory_mib;  // nullopt: NVML did not say
};

/// One process with a local rank, as a ps row or a job's rows give it.
struct RankedProcess {
  std::string who;                     // "pid 31 (alice)", "rank 3 (pid 31) on node7"
  std::string variable;                // the local-rank variable ("LOCAL_RANK", "SLURM_LOCALID", ...)
  uint32_t rank = 0;                   // its value
  size_t cuda_devices = 0;             // how many GPUs its CUDA sees
  std::optional<uint32_t> own_index;   // the nvidia-smi GPU its cuda:rank is; nullopt: none (rank >= cuda_devices)
  std::string own_gpu;                 // that GPU in words ("" when none)
  std::vector<RankHeld> held;          // every GPU it is listed on, in the caller's row order
  /// `gpumap bind` gave it its GPUs (GPUMAP_BOUND matches its CUDA_VISIBLE_DEVICES): its own are its
  /// cuda:0 .. cuda:bound_own-1 (own_index is its cuda:0), whatever its rank; the rest (bind
  /// --keep-visible) are the other ranks'.
  std::optional<size_t> bound_own;
};

/// A finding and the GPU (an index into RankedProcess::held) it belongs to: its row in `ps`.
struct RankFinding {
  Finding finding;
  size_t held = 0;
  /// Every GPU (indices into RankedProcess::held) it holds memory on that is not its own: where a
  /// stray context sits, or where a rank on the wrong GPU works.  The first is `held`.
  std::vector<size_t> others = {};
};

/// rank-on-wrong-gpu (error): it sees more than one GPU and more than `rank`, and holds memory
/// only on GPUs that are not its cuda:rank (when bound: not its cuda:0..bound_own-1).  stray-context (warning): it holds memory on its
/// cuda:rank and on other GPUs too.  At most one of each per process, on the first GPU that is
/// not its own.  Nothing when a GPU it is on is outside its view (its environment then is not
/// what its CUDA uses: outside-visible-set says so), or when no GPU holds memory.  A GPU whose
/// memory NVML does not report counts as held (it is listed: it has a context there); 0 MiB
/// does not.
std::vector<RankFinding> rank_findings(const RankedProcess& p);

/// The local rank in code, for a note: int(os.environ["LOCAL_RANK"]) for a variable, args.local_rank
/// for a rank given on the command line (`--local_rank`, `--local-rank`: argparse's attribute), the
/// function's first argument for a torch.multiprocessing.spawn worker (resolve/process_view.h).
std::string rank_in_code(const std::string& rank_variable);

/// The launcher's own knob that starts `n` processes per node, for the launcher whose local-rank
/// variable is `rank_variable` (env/launcher.h kLocalRankVariables): `torchrun --nproc-per-node=n`
/// (LOCAL_RANK; torch.distributed.launch takes the same), `srun --ntasks-per-node=n`
/// (SLURM_LOCALID), `mpirun --map-by ppr:n:node` (Open MPI), `mpirun -ppn n` (MPICH's Hydra, Intel
/// MPI, MVAPICH2).  More ranks than GPUs is fixed there: no CUDA_VISIBLE_DEVICES gives four ranks
/// three GPUs of their own.
std::string ranks_per_node_knob(const std::string& rank_variable, size_t n);

}  // namespace gpumap
