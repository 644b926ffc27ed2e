// The one table of the environment variables gpumap reads: name, what it means, who reads it.
// The seams (session's seams_from_environment), the terminal style, the variables reported in
// --json, the man page's ENVIRONMENT, the completion of --env NAME=, docs/cli.md (checked by a
// test) and the Python package (through gpumap_environment_variables()) all come from it.
// Code reads a variable by env_var("NAME"), which does not compile for a name not listed here.
#pragma once
#include <cstddef>
#include <string_view>

namespace gpumap {

/// Who reads a variable (a bit set: SLURM_JOB_ID is both reasoned about and a default).
enum EnvReader : unsigned {
  /// Part of the environment gpumap reasons about: this process's, --env/--unset, or another
  /// process's own (ps).  --env and --unset complete these names.
  kEnvReasoned = 1,
  /// gpumap's own settings: main reads them once into the Seams; the library takes them from
  /// its caller (the Python package passes these, raw, from its environment).
  kEnvSeams = 2,
  /// How text output looks (main, for stdout).
  kEnvTerminal = 4,
  /// A command's default for an option (job-map), or where it finds a program (job).
  kEnvCommand = 8,
  /// Given by gpumap to its CUDA probe child, never set in gpumap's own process.
  kEnvProbeChild = 16,
};

struct EnvVarInfo {
  const char* name;
  unsigned readers;  // EnvReader bits
  /// Reported (with its value or null) in the `variables` object of --json and the C API.
  bool reported;
  const char* meaning;
};

// clang-format off
inline constexpr EnvVarInfo kEnvVars[] = {
    // The environment reasoned about; the reported ones in the order --json lists them.
    {"CUDA_VISIBLE_DEVICES", kEnvReasoned, true, "the GPUs CUDA may use, and their order: what gpumap reads and explains"},
    {"CUDA_DEVICE_ORDER", kEnvReasoned, true, "FASTEST_FIRST (CUDA's default) or PCI_BUS_ID (nvidia-smi's order)"},
    {"NVIDIA_VISIBLE_DEVICES", kEnvReasoned, true, "the container runtime's GPU selection (host GPUs injected into a container)"},
    {"CUDA_MPS_PIPE_DIRECTORY", kEnvReasoned, true, "set in an MPS client: the MPS server decides which GPUs exist"},
    {"SLURM_STEP_GPUS", kEnvReasoned, true, "the GPUs Slurm gave the job step (host GPU ids)"},
    {"SLURM_JOB_GPUS", kEnvReasoned | kEnvCommand, true, "the GPUs Slurm gave the job (host GPU ids); job-map's default for --gpus"},
    {"GPU_DEVICE_ORDINAL", kEnvReasoned, true, "set by Slurm's GPU plugin beside CUDA_VISIBLE_DEVICES"},
    {"SLURM_LOCALID", kEnvReasoned, true, "the task's rank on its node (srun)"},
    {"SLURM_GPUS_ON_NODE", kEnvReasoned, true, "how many GPUs the job has on this node"},
    {"LOCAL_RANK", kEnvReasoned, true, "the rank on its node (torchrun)"},
    {"LOCAL_WORLD_SIZE", kEnvReasoned, true, "how many ranks run on this node (torchrun)"},
    {"RANK", kEnvReasoned, true, "the global rank (torchrun)"},
    {"WORLD_SIZE", kEnvReasoned, true, "how many ranks run in all (torchrun)"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", kEnvReasoned, true, "the rank on its node (Open MPI's mpirun)"},
    {"MV2_COMM_WORLD_LOCAL_RANK", kEnvReasoned, true, "the rank on its node (MVAPICH2)"},
    {"MPI_LOCALRANKID", kEnvReasoned, true, "the rank on its node (MPICH's Hydra, Intel MPI)"},
    {"PMI_LOCAL_RANK", kEnvReasoned, true, "the rank on its node (MPICH's Hydra, Intel MPI)"},
    {"GPUMAP_BOUND", kEnvReasoned, true,
     "set by gpumap bind in the rank it starts, to the CUDA_VISIBLE_DEVICES it gave it: doctor then knows the narrowing is deliberate"},
    {"GPUMAP_BOUND_OWN", kEnvReasoned, true,
     "set by gpumap bind --keep-visible beside GPUMAP_BOUND: how many of the rank's first GPUs are its own (the rest are the "
     "other ranks', kept visible); doctor, ps and job judge the rank by its cuda:0"},
    {"SLURM_JOB_ID", kEnvReasoned | kEnvCommand, false, "the Slurm job (a process inside a job); job-map's default for --job"},
    {"SLURM_STEP_ID", kEnvReasoned, false, "the Slurm job step (a process inside a step)"},
    {"SLURM_PROCID", kEnvReasoned, false, "the global rank of a Slurm task"},
    {"OMPI_COMM_WORLD_RANK", kEnvReasoned, false, "the global rank (Open MPI's mpirun)"},
    {"PMIX_RANK", kEnvReasoned, false, "the global rank (a PMIx launcher: Open MPI 5, srun --mpi=pmix)"},
    {"MV2_COMM_WORLD_RANK", kEnvReasoned, false, "the global rank (MVAPICH2)"},
    {"PMI_RANK", kEnvReasoned, false, "the global rank (MPICH's Hydra, Intel MPI, srun --mpi=pmi2)"},
    {"SLURMD_NODENAME", kEnvReasoned, false, "the node name Slurm gave the task"},
    {"TORCHELASTIC_RUN_ID", kEnvReasoned, false, "a torchrun run: ps groups the processes of one job by it"},
    {"MASTER_ADDR", kEnvReasoned, false, "the rendezvous address of a distributed run: ps groups by it and MASTER_PORT"},
    {"MASTER_PORT", kEnvReasoned, false, "the rendezvous port of a distributed run"},
    // gpumap's own settings: the seams.
    {"GPUMAP_SIMULATE", kEnvSeams, false, "like --simulate: a bundled simulated host or a host file"},
    {"GPUMAP_HOSTS_DIR", kEnvSeams, false, "where bundled host names are looked up first"},
    {"GPUMAP_SIM_LIBDIR", kEnvSeams, false, "the folder of the simulated driver libraries (default: sim/ beside gpumap, installed LIBDIR/gpumap/sim)"},
    {"GPUMAP_LOCK_DIR", kEnvSeams, false, "the lease folder of pick, run and bind (default /tmp/gpumap-leases)"},
    {"GPUMAP_CACHE_DIR", kEnvSeams, false, "the folder of the per-boot cache of the driver's device order"},
    {"XDG_CACHE_HOME", kEnvSeams, false, "without GPUMAP_CACHE_DIR the cache is $XDG_CACHE_HOME/gpumap"},
    {"GPUMAP_STATE_DIR", kEnvSeams, false,
     "the folder of the default snapshot file (default /var/lib/gpumap for root, else $XDG_STATE_HOME/gpumap)"},
    {"XDG_STATE_HOME", kEnvSeams, false, "without GPUMAP_STATE_DIR, a user's snapshots are in $XDG_STATE_HOME/gpumap"},
    {"HOME", kEnvSeams, false, "without the XDG folders: ~/.cache/gpumap and ~/.local/state/gpumap"},
    {"GPUMAP_DRIVER_TIMEOUT", kEnvSeams, false,
     "seconds NVML and the CUDA probe may take before gpumap gives up with exit 3 (default 60; 0: no limit)"},
    {"GPUMAP_IN_CONTAINER", kEnvSeams, false, "1 or 0 forces container detection (tests)"},
    {"container", kEnvSeams, false, "set by systemd-nspawn, podman and others: gpumap runs in a container"},
    {"GPUMAP_PROC_ROOT", kEnvSeams, false, "a folder laid out like /proc, read instead of it (tests of ps)"},
    {"GPUMAP_SYSFS_ROOT", kEnvSeams, false, "a folder laid out like /sys, read instead of it for PCI CPU affinity (tests)"},
    {"GPUMAP_NVML_PID_NS", kEnvSeams, false, "the PID namespace NVML's process ids belong to (tests of ps)"},
    {"GPUMAP_TRACE", kEnvSeams, false, "set: print the time of each NVML call to stderr"},
    {"GPUMAP_KUBELET_SOCKET", kEnvSeams, false,
     "the kubelet's pod-resources socket (default /var/lib/kubelet/pod-resources/kubelet.sock)"},
    {"GPUMAP_CDI_DIRS", kEnvSeams, false,
     "the CDI spec folders, colon-separated, lowest priority first (default /etc/cdi:/var/run/cdi)"},
    // The text output.
    {"COLUMNS", kEnvTerminal, false, "the terminal width tables and paragraphs fit (default: the terminal's)"},
    {"NO_COLOR", kEnvTerminal, false, "set and not empty: no colour, whatever else is set (https://no-color.org)"},
    {"FORCE_COLOR", kEnvTerminal, false, "set, not empty and not 0: colour even into a pipe (https://force-color.org)"},
    {"CLICOLOR_FORCE", kEnvTerminal, false, "set, not empty and not 0: colour even into a pipe (https://bixense.com/clicolors)"},
    {"TERM", kEnvTerminal, false, "dumb: no colour unless forced; linux (the console): top draws ASCII bars"},
    {"LC_ALL", kEnvTerminal, false, "the first of LC_ALL, LC_CTYPE, LANG set: its charset UTF-8 gives top block bars, else ASCII"},
    {"LC_CTYPE", kEnvTerminal, false, "see LC_ALL"},
    {"LANG", kEnvTerminal, false, "see LC_ALL"},
    // Commands' defaults.
    {"DCGM_HPC_JOB_MAPPING_DIR", kEnvCommand, false, "job-map's default for --dir (dcgm-exporter's folder)"},
    {"LISTEN_PID", kEnvCommand, false, "systemd socket activation: serve takes fd 3 when this is its pid"},
    {"LISTEN_FDS", kEnvCommand, false, "systemd socket activation: how many sockets were passed (serve takes exactly 1)"},
    {"PATH", kEnvCommand, false, "where job finds srun, sacct and scontrol"},
    {"GPUMAP_PROMETHEUS", kEnvCommand, false, "fleet's default for --prometheus: the Prometheus that scrapes gpumap serve"},
    // The probe child.
    {"GPUMAP_FAKE_HOST", kEnvProbeChild, false,
     "given by gpumap to its CUDA probe child for the simulated libcuda; not for users (gpumap never sets it in its own environment)"},
};
// clang-format on

inline constexpr size_t kEnvVarCount = sizeof(kEnvVars) / sizeof(kEnvVars[0]);

/// The table's entry for `name`, or nullptr.
constexpr const EnvVarInfo* find_env_var(std::string_view name) {
  for (const EnvVarInfo& v : kEnvVars)
    if (name == v.name) return &v;
  return nullptr;
}

/// The table's position of `name`, kEnvVarCount when it is not there.  By index, not through a
/// pointer or reference: under -fsanitize=undefined GCC adds a null check to every reference it
/// reads through, which a constant expression cannot evaluate (the ASan build failed on it).
constexpr size_t env_var_index(std::string_view name) {
  for (size_t i = 0; i < kEnvVarCount; ++i)
    if (name == std::string_view(kEnvVars[i].name)) return i;
  return kEnvVarCount;
}

/// `name`, checked at compile time against the table: a variable read by code is a variable
/// the man page, docs/cli.md and the completion know.
consteval const char* env_var(const char* name) {
  if (env_var_index(name) == kEnvVarCount) throw "not in kEnvVars (src/model/env_vars.h): add it there";  // a compile error
  return name;
}

/// Words for the reader bits, for JSON and the man page ("environment", "seams", ...).
constexpr const char* env_reader_name(EnvReader r) {
  switch (r) {
    case kEnvReasoned: return "environment";
    case kEnvSeams: return "seams";
    case kEnvTerminal: return "terminal";
    case kEnvCommand: return "command";
    case kEnvProbeChild: return "probe child";
  }
  return "";
}

inline constexpr EnvReader kEnvReaders[] = {kEnvReasoned, kEnvSeams, kEnvTerminal, kEnvCommand, kEnvProbeChild};

namespace env_vars_detail {
constexpr bool names_unique() {
  for (size_t i = 0; i < kEnvVarCount; ++i)
    for (size_t j = i + 1; j < kEnvVarCount; ++j)
      if (std::string_view(kEnvVars[i].name) == kEnvVars[j].name) return false;
  return true;
}
}  // namespace env_vars_detail
static_assert(env_vars_detail::names_unique(), "a variable is listed twice in kEnvVars");

}  // namespace gpumap
