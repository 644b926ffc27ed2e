// gpumap job-map --prolog/--epilog: dcgm-exporter's HPC job-mapping files from a Slurm prolog.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "session/job_map.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  bool prolog = args.has("--prolog"), epilog = args.has("--epilog");
  if (prolog == epilog)
    throw Error(kExitUsage, "job-map needs exactly one of --prolog and --epilog",
                "Prolog: gpumap job-map --prolog; Epilog: gpumap job-map --epilog (docs/metrics.md)");
  std::optional<std::string> dir = args.value("--dir");
  if (!dir) dir = ctx.session().env().get("DCGM_HPC_JOB_MAPPING_DIR");
  if (!dir || dir->empty())
    throw Error(kExitUsage, "job-map: no folder: neither --dir nor DCGM_HPC_JOB_MAPPING_DIR is set",
                "give dcgm-exporter's --hpc-job-mapping-dir, e.g. --dir /run/dcgm-job-map");
  std::optional<std::string> job = args.value("--job");
  if (!job) job = ctx.session().env().get("SLURM_JOB_ID");
  if (!job) throw Error(kExitUsage, "job-map: no job id: neither --job nor SLURM_JOB_ID is set", "give --job JOBID");
  JobMapNaming naming = JobMapNaming::kNvmlIndex;
  std::string by = args.value("--name-by").value_or("index");
  if (by == "minor") naming = JobMapNaming::kMinor;
  else if (by != "index")
    throw Error(kExitUsage, "--name-by `" + by + "` is not index or minor",
                "--name-by index (dcgm-exporter's gpu label, the default) or --name-by minor (/dev/nvidiaN)");
  std::vector<std::string> files, notes;
  if (prolog) {
    // The allocation as Slurm names it: its GPU ids or UUIDs.  A task's CUDA_VISIBLE_DEVICES is
    // renumbered under ConstrainDevices, so it is used only where Slurm sets nothing better.
    std::optional<std::string> gpus = args.value("--gpus");
    if (!gpus) gpus = ctx.session().env().get("SLURM_JOB_GPUS");
    if (!gpus) gpus = ctx.session().env().get("CUDA_VISIBLE_DEVICES");
    if (!gpus)
      throw Error(kExitUsage, "job-map --prolog: no allocation: neither --gpus nor SLURM_JOB_GPUS is set",
                  "give --gpus as Slurm's GPU ids or UUIDs (a job without GPUs needs no prolog)");
    if (trim(*gpus).empty() || gpus->find_first_not_of(", \t") == std::string::npos)
      throw Error(kExitUsage, "job-map --prolog: the allocation is empty (--gpus or SLURM_JOB_GPUS names no GPU)",
                  "give --gpus as Slurm's GPU ids or UUIDs (a job without GPUs needs no prolog)");
    files = job_map_files(ctx.session().snapshot({false}), *gpus, naming);
    notes = job_map_minor_notes(ctx.session().snapshot({false}), *gpus, naming);
  } else {
    files = job_map_existing_files(*dir);
  }
  JobMapResult done = update_job_map(*dir, files, *job, prolog);
  // Something left alone: the prolog's job then lacks a GPU's label (exit 1); the epilog carries
  // on past what is not a mapping file (a warning) and fails only where the OS refused a write.
  bool failed = false;
  for (const JobMapResult::Skipped& k : done.skipped) {
    std::cerr << "gpumap job-map: warning: " << printable(k.reason) << "\n";
    failed = failed || prolog || k.failed;
  }
  for (const std::string& n : notes) std::cerr << "gpumap job-map: note: " << n << "\n";
  if (ctx.json()) {
    Json skipped = Json::array();
    for (const JobMapResult::Skipped& k : done.skipped) skipped.push_back({{"file", k.file}, {"reason", k.reason}});
    std::cout << dump({{"job_id", *job}, {"dir", *dir}, {"action", prolog ? "prolog" : "epilog"}, {"files", done.changed},
                       {"skipped", skipped}, {"notes", notes}});
  } else {
    std::cout << "gpumap job-map: job " << *job << (prolog ? " added to" : " removed from");
    for (const std::string& f : done.changed) std::cout << " " << printable(*dir) << "/" << f;
    std::cout << (done.changed.empty() ? " no file" : "") << "\n";
  }
  if (failed) return kExitError;
  return kExitOk;
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
