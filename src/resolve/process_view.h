// `gpumap ps`: the join of NVML's per-GPU process lists with what /proc says about each
// process, and each process's own view of cuda:N (resolved from the environment it
// started with, by the same engine as `gpumap map`).  Pure: the /proc reads and the
// mapping come in as values and a function, so tests need neither a driver nor /proc.
// The join gives facts only; the findings on each row come from findings/ps_rules.h, and
// session/ps.h's build_ps does both.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"
#include "model/finding.h"
#include "model/pod.h"
#include "model/process.h"
#include "model/snapshot.h"
#include "resolve/cuda_rules.h"

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

/// The longest id a row keeps from a process's environment (`slurm_job_id`, `slurm_procid`,
/// `local_rank`, `slurm_localid`); a longer one is cut and ends in "…" (bytes, before the "…").
inline constexpr size_t kMaxRowIdBytes = 128;

/// ProcessRow::rank_variable of a torch.multiprocessing.spawn worker: no rank variable, a child of
/// the same parent as its siblings with the same command line (spawn's `spawn_main(...)
/// --multiprocessing-fork`, file descriptors aside); its rank is its place in start order (spawn
/// starts rank 0 first, then 1, ...).
inline constexpr const char* kSpawnRank = "mp.spawn rank";

/// A local rank given on the command line, as torch.distributed.launch passes it (`--local_rank=N`,
/// `--local_rank N`; torch 2 also `--local-rank`): the option and its value; nullopt when none.
std::optional<std::pair<std::string, uint32_t>> argv_local_rank(const std::vector<std::string>& argv);

/// One row: one process on one GPU.
struct ProcessRow {
  uint32_t pid = 0;                    // as NVML reports it
  std::optional<uint32_t> local_pid;   // the same process in gpumap's own PID namespace
  std::optional<std::vector<uint32_t>> nspid;  // its PID in each namespace, the proc root's first
  std::optional<uint32_t> ppid;        // its parent, in the proc root's namespace (`top`'s tree)
  std::optional<int64_t> start_ticks;  // when it started (ProcProcess::start_ticks): `top` signals only this one
  uint32_t nvml_index = 0;
  std::string uuid;
  std::string type;                    // "compute" | "graphics"
  std::optional<uint64_t> used_memory_mib;
  std::optional<uint32_t> sm_utilization, memory_utilization;  // percent (GpuProcess); nullopt: not known
  ProcessState state = ProcessState::kRunning;
  bool zombie = false;                 // kExited: exited but not reaped (else: no /proc entry)
  std::optional<uint32_t> uid;
  std::optional<std::string> user, command;
  std::optional<std::vector<std::string>> argv;  // its arguments (ProcProcess::argv), to write a relaunch line
  bool command_truncated = false;      // /proc/PID/cmdline was longer than kMaxCmdlineBytes: `command` is its start
  bool environ_truncated = false;      // environ was longer than kMaxEnvironBytes: variables past the cut unread
  ProcAccess environ_access = ProcAccess::kGone;
  std::string environ_error;
  bool environ_known = false;
  std::optional<std::string> cuda_visible_devices, cuda_device_order, nvidia_visible_devices;
  std::optional<std::string> local_rank, slurm_localid;
  std::optional<std::string> slurm_job_id, slurm_procid;  // for `gpumap job`
  std::optional<std::string> global_rank;  // LauncherEnv::global_rank (RANK, OMPI_COMM_WORLD_RANK, ..., SLURM_PROCID)
  std::string global_rank_variable;        // which variable gave it, or ""
  std::string rank_variable;           // the innermost launcher's local-rank variable that parsed, or "";
                                       // else `--local_rank`/`--local-rank` (its command line) or kSpawnRank
  std::optional<uint32_t> rank;        // its value
  std::string job;                     // the job its launcher names ("torchrun <id>", "slurm <job>.<step>",
                                       // "master <addr>:<port>"); "" when none
  std::optional<size_t> view;          // environ_known: its environment's CUDA view, in PsResult::views
  std::optional<int> cuda_ordinal;          // the cuda:N this process calls this GPU; nullopt: it cannot see it
  std::optional<size_t> cuda_device_count;  // environ_known: how many GPUs its CUDA sees
  std::optional<uint32_t> rank_nvml_index;  // the nvidia-smi GPU its cuda:{rank} is (its cuda:0 when bound_own
                                            // is set); nullopt: no rank, or it sees no more than `rank` GPUs
  std::optional<size_t> bound_own;     // `gpumap bind` set its CUDA_VISIBLE_DEVICES (GPUMAP_BOUND matches): its
                                       // first bound_own GPUs are its own (all it sees; fewer after --keep-visible)
  std::optional<std::string> cuda_error;  // CUDA_ERROR_* cuInit would return under its environment
  /// The GPUs of its container (host UUIDs, a MIG device's own), when it runs in one whose GPUs
  /// are known (resolve/pod_join.h: container_cuda_views): its view, cuda_ordinal and rank are then
  /// CUDA's inside that container, which numbers only these from 0.
  std::optional<std::vector<std::string>> container_gpus;
  /// container_gpus is fewer than the host's devices, so its cuda:N may not be the host's cuda:N for
  /// the same CUDA variables: the text views mark its cell (`cuda:0*`) and say why under the table.
  bool container_renumbers = false;
  std::optional<PodRef> pod;            // its Kubernetes pod (its cgroup), named by the kubelet if asked
  /// Its cgroup names a pod, but not at the kubelet's place or not in root's folders
  /// (env/pod_cgroup.h pod_cgroup_untrusted): why; `pod` is then not set ("" otherwise).
  std::string pod_unverified;
  std::optional<std::string> hostname;  // $HOSTNAME it started with: a pod's name unless the spec says
                                        // otherwise (resolve/pod_join.h matches on it)
  /// Its parent as /proc says (read once per parent, for launcher-set-visible-devices): its command
  /// line and the CUDA_VISIBLE_DEVICES it started with; parent_environ_known false when its
  /// environment could not be read (or it has no parent here).
  std::optional<std::vector<std::string>> parent_argv;
  bool parent_environ_known = false;
  std::optional<std::string> parent_cuda_visible_devices;
  std::vector<Finding> findings;       // filled by findings/ps_rules.h (add_ps_findings)
  std::vector<size_t> gpu_findings;    // the PsResult::gpu_findings that concern it (positions there)
};

/// A finding about one GPU and several of its processes (local ranks sharing it, processes sharing
/// it): reported once per GPU, naming the pids, not copied onto each of their rows.
struct GpuFinding {
  uint32_t nvml_index = 0;
  std::string uuid;
  std::vector<uint32_t> pids;  // the processes it concerns, as NVML reports them
  Finding finding;
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
  std::vector<CudaView> views;                // those mappings' views (ProcessRow::view)
  std::map<uint32_t, std::set<uint32_t>> pids_on_gpu;  // NVML index -> its processes, less those with no
                                                       // /proc entry (exited: they share nothing)
  size_t gpu_users = 0;                       // distinct users among the processes read
  std::vector<GpuFinding> gpu_findings;       // filled by findings/ps_rules.h, each once per GPU
};

/// Builds every row, with its facts and no findings (findings/ps_rules.h adds them).
PsResult join_ps(const Snapshot& s, const PidNamespaceView& ns, const ReadProc& read, const ViewOf& view_of);

/// Sets what a row's CUDA view says about it: `view` (its position in PsResult::views), cuInit's
/// error, its cuda:N of its GPU, how many GPUs it sees, and its rank's own GPU (`bound_own`
/// clamped to what it sees).  join_ps calls it with the host's view; resolve/pod_join.h again
/// with its container's.
void apply_cuda_view(const Snapshot& s, size_t view, const CudaView& v, ProcessRow& r);

}  // namespace gpumap
