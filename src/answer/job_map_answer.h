// `gpumap job-map`'s request and answer: what the prolog or epilog asked, and the files it changed
// and left alone (session/job_map.h computes it; output/job_map_view.h writes it).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// What names a mapping file: the NVML index (dcgm-exporter's `gpu` label, DCGM's GPU id) or the
/// device minor number (/dev/nvidiaN).
enum class JobMapNaming { kNvmlIndex, kMinor };

/// What update_job_map did: the files it rewrote or removed, and each it left alone with why.
struct JobMapResult {
  struct Skipped {
    std::string file;    // its name in the folder
    std::string reason;  // "DIR/1 is a folder, not a mapping file: left alone"
    bool failed = false;  // a mapping file the OS would not let gpumap read, write or remove
  };
  std::vector<std::string> changed;
  std::vector<Skipped> skipped;
};

/// One prolog or epilog.  Unset values come from the environment: `dir` from
/// DCGM_HPC_JOB_MAPPING_DIR, `job` from SLURM_JOB_ID, `gpus` (prolog) from SLURM_JOB_GPUS, else
/// CUDA_VISIBLE_DEVICES.
struct JobMapRequest {
  bool prolog = true;  // false: the epilog
  std::optional<std::string> dir;
  std::optional<std::string> job;
  std::optional<std::string> gpus;
  JobMapNaming naming = JobMapNaming::kNvmlIndex;
};

struct JobMapAnswer {
  std::string job_id;
  std::string dir;
  bool prolog = true;
  JobMapResult done;
  std::vector<std::string> notes;  // minor-differs-from-index, in words
  /// Something was left alone that matters (the command exits 1): anything in the prolog (its job
  /// then lacks a GPU's label), in the epilog only what the OS refused to write.
  bool failed = false;
};

}  // namespace gpumap
