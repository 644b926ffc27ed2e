// `gpumap ps`: the join of NVML's per-GPU process lists with what /proc says about each
// process, and each process's own view of cuda:N (resolved from the environment it
// started with, by the same engine as `gpumap map`).  Pure: the /proc reads and the
// mapping come in as values and a function, so tests need neither a driver nor /proc.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"
#include "findings/finding.h"
#include "model/snapshot.h"
#include "os/proc.h"
#include "resolve/cuda_view.h"

namespace gpumap {

/// Whether NVML's PIDs can be looked up in the proc root we read.
struct PidNamespaceView {
  bool joinable = true;              // false: NVML's PIDs belong to a namespace this /proc cannot name
  std::optional<std::string> procfs;   // pid namespace of the proc root ("pid:[...]"), when known
  std::optional<std::string> nvml;     // pid namespace NVML's PIDs live in, when known
  size_t self_level = 0;             // gpumap's depth below the proc root's namespace (NSpid fields - 1)
  std::string note;                  // how this was decided, in words
};

/// Decides joinability.  `nvml_ns`: the namespace of NVML's PIDs (nullopt: the proc root's own,
/// as for a simulated host); `procfs_ns`: readlink of <root>/1/ns/pid; `self_ns`: of <root>/self;
/// `self_nspid`: NSpid of <root>/self.
PidNamespaceView classify_pid_namespace(const std::optional<std::string>& nvml_ns,
                                        const std::optional<std::string>& procfs_ns,
                                        const std::optional<std::string>& self_ns,
                                        const std::optional<std::vector<uint32_t>>& self_nspid);

enum class ProcessState { kRunning, kExited, kNotVisible };
/// "running", "exited", "not-visible".
const char* process_state_name(ProcessState s);

/// One row: one process on one GPU.
struct ProcessRow {
  uint32_t pid = 0;                    // as NVML reports it
  std::optional<uint32_t> local_pid;   // the same process in gpumap's own PID namespace
  std::optional<std::vector<uint32_t>> nspid;  // its PID in each namespace, the proc root's first
  uint32_t nvml_index = 0;
  std::string uuid;
  std::string type;                    // "compute" | "graphics"
  std::optional<uint64_t> used_memory_mib;
  ProcessState state = ProcessState::kRunning;
  std::optional<uint32_t> uid;
  std::optional<std::string> user, command;
  ProcAccess environ_access = ProcAccess::kGone;
  std::string environ_error;
  bool environ_known = false;
  std::optional<std::string> cuda_visible_devices, cuda_device_order, nvidia_visible_devices;
  std::optional<std::string> local_rank, slurm_localid;
  std::optional<std::string> slurm_job_id, slurm_procid;  // for `gpumap job`
  std::optional<int> ordinal;          // the cuda:N this process calls this GPU; nullopt: it cannot see it
  std::optional<std::string> cuda_error;  // CUDA_ERROR_* cuInit would return under its environment
  std::vector<Finding> findings;
};

/// The CUDA view of an environment (the `map` engine).  Called once per distinct
/// (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER) pair.
using ViewOf = std::function<CudaView(const Environment&)>;

/// Reads one process (ProcFs::read in production).
using ReadProc = std::function<ProcProcess(uint32_t pid)>;

struct PsResult {
  std::vector<ProcessRow> rows;              // GPU order, then NVML's order within a GPU
  std::vector<uint32_t> unlisted_gpus;        // GPUs whose process lists NVML could not read
  size_t distinct_views = 0;                  // mappings computed (cache misses)
};

/// Builds every row and its findings.
PsResult build_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of);

}  // namespace gpumap
