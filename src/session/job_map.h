// `gpumap job-map --prolog/--epilog`: dcgm-exporter's HPC job-mapping files (its
// --hpc-job-mapping-dir / $DCGM_HPC_JOB_MAPPING_DIR).  dcgm-exporter reads every file of that
// folder whose name is a GPU id (`0`, `1`, ...; since its MIG support `GPU.GI`, the GPU instance
// of a MIG device), one job id a line, and labels the GPU's series `hpc_job` with each
// (NVIDIA/dcgm-exporter internal/pkg/transformation/hpc.go; MIG: dcgm-exporter pull request 602).
// The allocation comes from Slurm as its GPU ids (`SLURM_JOB_GPUS`: positions in gres.conf,
// which lists /dev/nvidiaN in order, so the device minor number), as UUIDs (Slurm 25.11), or as
// MIG UUIDs; never from a job's renumbered CUDA_VISIBLE_DEVICES.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "answer/job_map_answer.h"  // JobMapNaming, JobMapResult
#include "model/snapshot.h"
#include "session/session.h"

namespace gpumap {

/// The files one job's allocation puts its id in, in allocation order, each once.
/// `allocation`: comma-separated entries, each a GPU- or MIG- UUID (or a unique prefix of one) or
/// a number, read as the device minor number (Slurm's GPU id).  Error(kExitUsage) naming an entry
/// that matches nothing, or a GPU that lacks the number the naming needs.  Pure.
std::vector<std::string> job_map_files(const Snapshot& s, const std::string& allocation, JobMapNaming naming);

/// Finding minor-differs-from-index where job-map meets it: for each Slurm GPU id (a device minor)
/// of `allocation` that is not the nvidia-smi index of its GPU, a sentence saying which GPU it is
/// and which file it got.  Empty on a host whose minors are its indices.  Pure.
std::vector<std::string> job_map_minor_notes(const Snapshot& s, const std::string& allocation, JobMapNaming naming);

/// The most a mapping file may hold (a file gpumap wrote has one short line per job on the GPU).
inline constexpr size_t kMaxJobMapFileBytes = 16u << 20;

/// "" when `job_id` is a Slurm job id (digits; an array task JOB_TASK or a heterogeneous
/// component JOB+N), else why not.  Pure.
std::string job_id_problem(const std::string& job_id);

/// Adds (prolog) or removes (epilog) `job_id` in each of `files` under `dir`: each file rewritten
/// atomically (os/state_file.h) under a lock on the folder (jobs that share a GPU start and end at
/// once); a file left with no job is removed.  Only regular files this user owns are touched: a
/// link, FIFO, device, folder, a file of another user or one over kMaxJobMapFileBytes is left alone
/// and listed in `skipped` (the rest still done).  Error(kExitUsage) for an id that is not a Slurm
/// job id; Error(kExitError) when the folder is unsafe (a link, not owned by root or this user,
/// writable by others) or its lock is not a plain file.
JobMapResult update_job_map(const std::string& dir, const std::vector<std::string>& files, const std::string& job_id,
                            bool add);

/// The mapping files in `dir` (names `N` or `N.M`), sorted: the epilog takes its job out of every
/// one, so a GPU renumbered or lost since the prolog keeps no stale id.  Empty when `dir` is missing.
std::vector<std::string> job_map_existing_files(const std::string& dir);

/// `gpumap job-map`: the request's defaults from the session's environment, checked (Error
/// kExitUsage naming what is missing or empty, and the fix), then the prolog adds the job to its
/// allocation's files (the driver read without a probe), the epilog takes it out of every file in
/// the folder (no driver read).  Error as update_job_map.
JobMapAnswer job_map(Session& session, const JobMapRequest& request);

}  // namespace gpumap
