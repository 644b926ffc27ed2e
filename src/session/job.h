// `gpumap job` as an operation: one running Slurm job read through Slurm itself.  The job's
// allocation comes from `scontrol show job -d`; each node's processes from `gpumap ps --json`,
// started once per node by `srun --overlap` (resolve/job_view.h builds both command lines and joins
// the answers; findings/job_rules.h judges them).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "os/subprocess.h"
#include "resolve/job_view.h"
#include "session/session.h"

namespace gpumap {

/// Runs one Slurm client program (argv[0] "scontrol" or "srun", looked up in the session's
/// PATH) with the session's environment, for at most `timeout_ms`.  os/subprocess.h's
/// run_capture in gpumap (throwing Error(kExitError) when the program is not in PATH); a fake in
/// tests.
using RunProgram = std::function<ProcResult(std::vector<std::string> argv, int timeout_ms)>;

struct JobRequest {
  std::string job_id;       // "": the session environment's $SLURM_JOB_ID
  int timeout_ms = 60000;   // for scontrol, and for the whole srun fan-out
  std::string timeout_name = "the timeout";  // how the caller names that setting, for hints
};

struct JobRun {
  JobReport report;
  /// Why each of report.missing_nodes gave no report, in words, with srun's own line about that
  /// node when it printed one.
  std::map<std::string, std::string> missing_why;
};

/// Reads the job: its allocation, then one ps report per node; a node that does not answer is
/// named in missing_nodes, the others are reported (the caller exits kExitPartial then).
/// `self` is this gpumap's path: srun starts the same path on every node.  Throws Error:
/// kExitUsage for no or a malformed job id; kExitError when a Slurm client program is not in
/// PATH (the real runner), scontrol fails or times out, or no node answered.
JobRun read_job(Session& session, const JobRequest& request, const RunProgram& run, const std::string& self);
/// The same with the real programs (run_capture, self_exe).
JobRun read_job(Session& session, const JobRequest& request);

}  // namespace gpumap
