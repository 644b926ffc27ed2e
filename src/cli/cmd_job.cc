// gpumap job [JOBID]: every node of a running Slurm job in one table, through Slurm itself.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/job_report.h"
#include "session/job.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (args.positionals().size() > 1) throw Error(kExitUsage, "job takes one JOBID", "gpumap job [JOBID]");
  JobRequest req;
  if (!args.positionals().empty()) req.job_id = args.positionals()[0];
  req.timeout_ms = static_cast<int>(args.integer("--timeout", 1, 3600).value_or(60) * 1000);
  req.timeout_name = "--timeout";
  JobRun job = [&] {
    try {
      return read_job(ctx.session(), req);
    } catch (const Error& e) {  // a missing or malformed id: say how to name one here
      if (e.exit_code() != kExitUsage) throw;
      throw Error(e.exit_code(), e.what(), "gpumap job JOBID   (squeue --me lists your jobs)");
    }
  }();
  const JobReport& r = job.report;
  std::cout << render_job(r, job.missing_why, ctx.json());
  if (worst(r.findings) == Severity::kError) return kExitFindings;
  return r.node_errors.empty() && r.missing_nodes.empty() ? kExitOk : kExitPartial;
}

}  // namespace

Command job_command() {
  return {"job", "one Slurm job's GPU processes on every node, with findings across the job",
          "gpumap job [JOBID] [--timeout SECONDS] [--json]",
          "Runs `gpumap ps --json` once on every node of a running Slurm job, through Slurm itself\n"
          "(srun --jobid=JOBID --overlap --ntasks-per-node=1; this binary's path must exist on every node),\n"
          "and the job's allocation from `scontrol show job -d`.  One row per process of the job: node,\n"
          "rank (SLURM_PROCID from the process's environment), pid, the GPU (nvidia-smi index as seen on\n"
          "that node, UUID), the cuda:N that rank calls it, memory.  Findings across the job: two ranks on\n"
          "one GPU, a rank on a GPU outside the job's allocation (error), an allocated GPU nobody uses, a rank\n"
          "not on its local rank's cuda:N (error) or holding memory on another GPU besides its own.\n"
          "A node that gives no report (slurmd down, hung, its ps failed) is named, the others shown.\n"
          "JOBID defaults to $SLURM_JOB_ID.  Exit 7 when a finding is an error, else 9 when a node gave no\n"
          "report; 1 when scontrol failed or no node answered, 2 on usage errors.",
          {{"--timeout", true, false, "SECONDS", "give up on scontrol/srun after this long (default 60)"}},
          true,
          run};
}

}  // namespace gpumap
