#include "findings/rank_rules.h"

#include <set>

#include "model/text.h"
#include "resolve/process_view.h"

namespace gpumap {
namespace {

bool holds_memory(const RankHeld& h) { return !h.used_memory_mib || *h.used_memory_mib > 0; }

std::string mib_words(const RankHeld& h) {
  return h.used_memory_mib ? std::to_string(*h.used_memory_mib) + " MiB" : "memory (NVML gives no amount)";
}

// "nvidia-smi GPU 0 (GPU-...), its cuda:0 (256 MiB)"
std::string held_words(const RankHeld& h) {
  return h.gpu + ", its cuda:" + std::to_string(*h.cuda_ordinal) + " (" + mib_words(h) + ")";
}

std::string note_for(const std::string& variable, bool bound) {
  if (bound)
    return "gpumap bind put this rank's own GPU first: use cuda:0 (torch.cuda.set_device(0)), not cuda:$" + variable +
           ", which under `bind --keep-visible` is another rank's GPU";
  return "call torch.cuda.set_device(" + rank_in_code(variable) + ") first, before any .cuda()/torch.cuda call or a library that initialises CUDA at import, and use "
         "device=f\"cuda:{local_rank}\"; or narrow each rank to its own GPU (start it with `gpumap bind -- CMD` "
         "under the launcher), then cuda:0 is its GPU";
}

}  // namespace

std::string rank_in_code(const std::string& rank_variable) {
  if (rank_variable == kSpawnRank) return "rank";  // fn(rank, ...): the index mp.spawn passes first
  if (rank_variable.rfind("--", 0) == 0) return "args.local_rank";
  return "int(os.environ[\"" + rank_variable + "\"])";
}

std::string ranks_per_node_knob(const std::string& rank_variable, size_t n) {
  const std::string k = std::to_string(n);
  if (rank_variable == kSpawnRank) return "torch.multiprocessing.spawn(fn, nprocs=" + k + ")";
  if (rank_variable == "SLURM_LOCALID") return "srun --ntasks-per-node=" + k;
  if (rank_variable == "OMPI_COMM_WORLD_LOCAL_RANK") return "mpirun --map-by ppr:" + k + ":node";
  if (rank_variable == "MPI_LOCALRANKID" || rank_variable == "PMI_LOCAL_RANK" || rank_variable == "MV2_COMM_WORLD_LOCAL_RANK")
    return "mpirun -ppn " + k;
  return "torchrun --nproc-per-node=" + k;
}

std::vector<RankFinding> rank_findings(const RankedProcess& p) {
  std::vector<RankFinding> out;
  // A process narrowed to one GPU (gpumap bind, Slurm's per-task binding) has no other to pick.
  if (p.cuda_devices < 2 || !p.own_index) return out;
  if (!p.bound_own && p.rank >= p.cuda_devices) return out;
  if (p.bound_own && *p.bound_own >= p.cuda_devices) return out;  // bind left it only its own GPUs
  auto is_own = [&](const RankHeld& h) {
    return p.bound_own ? static_cast<size_t>(*h.cuda_ordinal) < *p.bound_own : h.nvml_index == *p.own_index;
  };
  std::vector<size_t> own, other;
  std::set<uint32_t> seen;  // a process in both the compute and the graphics list of a GPU: once
  for (size_t i = 0; i < p.held.size(); ++i) {
    const RankHeld& h = p.held[i];
    if (!h.cuda_ordinal) return out;  // its CUDA is not what its environment says: outside-visible-set
    if (!holds_memory(h) || !seen.insert(h.nvml_index).second) continue;
    (is_own(h) ? own : other).push_back(i);
  }
  if (other.empty()) return out;
  std::vector<std::string> others;
  for (size_t i : other) others.push_back(held_words(p.held[i]));
  const std::string rank_words = p.variable + "=" + std::to_string(p.rank);
  const std::string own_words =
      p.bound_own ? "its own GPU, cuda:0 (gpumap bind put it first), is " + p.own_gpu
                  : "its cuda:" + std::to_string(p.rank) + " is " + p.own_gpu;
  Finding f;
  if (own.empty()) {
    f.id = "rank-on-wrong-gpu";
    f.severity = Severity::kError;
    f.message = p.who + " has " + rank_words + " and sees " + std::to_string(p.cuda_devices) +
                " GPUs, but works only on " + join(others, "; ") + ", while " + own_words +
                (p.bound_own ? ": the program picks its GPU by its local rank, which after gpumap bind names another "
                               "rank's GPU, so it competes with that rank and leaves its own unused"
                             : ": the program does not use its local rank (it takes cuda:0 or the default device), so "
                               "it competes with the rank whose GPU that is and leaves its own unused");
  } else {
    f.id = "stray-context";
    f.severity = Severity::kWarning;
    f.message = p.who + " has " + rank_words + " and works on its own GPU (" + own_words + ", " +
                mib_words(p.held[own.front()]) + "), but also holds " + join(others, "; ") +
                ": something touched CUDA there before torch.cuda.set_device (each such context costs hundreds of "
                "MiB, and on another rank's GPU it competes with that rank)";
  }
  f.note = note_for(p.variable, p.bound_own.has_value());
  out.push_back({f, other.front(), other});
  return out;
}

}  // namespace gpumap
