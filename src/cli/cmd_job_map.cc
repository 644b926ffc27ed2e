// gpumap job-map --prolog/--epilog: dcgm-exporter's HPC job-mapping files from a Slurm prolog.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/job_map_view.h"
#include "session/job_map.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  JobMapRequest req;
  bool epilog = args.has("--epilog");
  req.prolog = args.has("--prolog");
  if (req.prolog == epilog)
    throw Error(kExitUsage, "job-map needs exactly one of --prolog and --epilog",
                "Prolog: gpumap job-map --prolog; Epilog: gpumap job-map --epilog (docs/metrics.md)");
  req.dir = args.value("--dir");
  req.job = args.value("--job");
  req.gpus = args.value("--gpus");
  std::string by = args.value("--name-by").value_or("index");
  if (by == "minor") req.naming = JobMapNaming::kMinor;
  else if (by != "index")
    throw Error(kExitUsage, "--name-by `" + by + "` is not index or minor",
                "--name-by index (dcgm-exporter's gpu label, the default) or --name-by minor (/dev/nvidiaN)");
  JobMapAnswer a = job_map(ctx.session(), req);
  // Something left alone: the prolog's job then lacks a GPU's label (exit 1); the epilog carries
  // on past what is not a mapping file (a warning) and fails only where the OS refused a write.
  std::cerr << job_map_messages(a);
  std::cout << render_job_map(a, ctx.json());
  return a.failed ? kExitError : kExitOk;
}

}  // namespace

Command job_map_command() {
  return {"job-map", "dcgm-exporter's HPC job-mapping files, from a Slurm prolog and epilog",
          "gpumap job-map --prolog|--epilog [--dir DIR] [--job JOBID] [--gpus LIST] [--name-by index|minor]",
          "Writes the files dcgm-exporter's --hpc-job-mapping-dir ($DCGM_HPC_JOB_MAPPING_DIR) reads to label GPU\n"
          "series with hpc_job: one file per GPU, named by its id (`gpu` label: the NVML index; --name-by minor:\n"
          "/dev/nvidiaN), `N.GI` for a MIG device (GI: its GPU instance), one job id a line.  --prolog adds the\n"
          "job (--job, default $SLURM_JOB_ID) to the files of its GPUs (--gpus, default $SLURM_JOB_GPUS: Slurm's\n"
          "GPU ids, read as device minor numbers, or GPU-/MIG- UUIDs as Slurm 25.11 gives them); --epilog takes\n"
          "it out of every file in the folder (no driver read), removing files left empty.  Files are rewritten\n"
          "atomically under a lock on the folder.  Folder: --dir, default $DCGM_HPC_JOB_MAPPING_DIR: a real folder\n"
          "owned by root (or you) that nobody else may write.  Only regular files of its own are touched: a link,\n"
          "FIFO, device, folder or another user's file there is left alone with a warning (the prolog then\n"
          "exits 1).  Job ids are Slurm's: digits, optionally _TASK or +N.",
          {{"--prolog", false, false, "", "add the job to its GPUs' files"},
           {"--epilog", false, false, "", "remove the job from every file"},
           {"--dir", true, false, "DIR", "the mapping folder (default $DCGM_HPC_JOB_MAPPING_DIR)"},
           {"--job", true, false, "JOBID", "the job id (default $SLURM_JOB_ID)"},
           {"--gpus", true, false, "LIST", "the allocation: Slurm GPU ids (device minors) or UUIDs (default $SLURM_JOB_GPUS)"},
           {"--name-by", true, false, "index|minor", "name files by NVML index (default) or device minor number"}},
          false,
          run};
}

}  // namespace gpumap
