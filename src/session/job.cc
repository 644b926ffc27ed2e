#include "session/job.h"

#include <sstream>

#include "model/error.h"
#include "session/ps.h"

namespace gpumap {
namespace {

std::string program(const std::string& name, const Environment& env) {
  std::string p = find_program(name, env.get("PATH"));
  if (p.empty())
    throw Error(kExitError, "job: `" + name + "` is not in PATH",
                "run gpumap job on a machine with the Slurm client commands (srun, scontrol)");
  return p;
}

std::string seconds(int timeout_ms) { return std::to_string(timeout_ms / 1000) + " s"; }

std::string job_id_of(const Session& session, const JobRequest& request) {
  std::string job = !request.job_id.empty() ? request.job_id : session.env().get("SLURM_JOB_ID").value_or("");
  if (job.empty())
    throw Error(kExitUsage, "job: no job id given and $SLURM_JOB_ID is not set",
                "name the job (squeue --me lists your jobs)");
  if (job.find_first_not_of("0123456789_") != std::string::npos)
    throw Error(kExitUsage, "job: `" + job + "` is not a Slurm job id", "a job id is a number, such as 1234");
  return job;
}

// srun's own words about `node` ("... failed on node N: ..."), or "".
std::string srun_line_about(const std::string& srun_err, const std::string& node) {
  std::istringstream err(srun_err);
  for (std::string line; std::getline(err, line);)
    if (line.find("node " + node + ":") != std::string::npos) return line;
  return "";
}

}  // namespace

JobRun read_job(Session& session, const JobRequest& request, const RunProgram& run, const std::string& self) {
  const std::string job = job_id_of(session, request);
  const int timeout_ms = request.timeout_ms;
  ProcResult sc = run({"scontrol", "show", "job", "-d", job}, timeout_ms);
  if (sc.timed_out)
    throw Error(kExitError, "job: scontrol show job " + job + " timed out after " + seconds(timeout_ms),
                "check that slurmctld answers (`scontrol ping`), or allow longer (" + request.timeout_name + ")");
  if (sc.exit_code != 0) {
    std::string why = !sc.err.empty() ? sc.err : !sc.spawn_error.empty() ? sc.spawn_error : "exit " + std::to_string(sc.exit_code);
    throw Error(kExitError, "job: scontrol show job " + job + " failed: " + why,
                "check the id with squeue; the job must be running");
  }
  std::vector<std::string> extra;
  if (session.seams().simulate) extra = {"--simulate", *session.seams().simulate};
  const std::vector<std::string> job_nodes = parse_job_nodes(sc.out);
  const std::map<std::string, std::vector<uint32_t>> allocation = parse_job_gpu_ids(sc.out);
  ProcResult ps = run(job_fanout_argv("srun", job, self, extra, job_nodes.size(),
                                      uniform_gpus_per_node(allocation, job_nodes)),
                      timeout_ms);
  if (!ps.spawn_error.empty()) throw Error(kExitError, "job: srun into job " + job + " failed: " + ps.spawn_error, "");
  // A node that does not answer in time (hung, or its slurmd gone: srun then says "Task launch
  // ... failed on node N" and exits non-zero, after the others' output) must not hide the
  // others: what came back is the report, the rest is named.
  JobRun out{build_job_report(job, split_labelled_output(ps.out), allocation, job_nodes), {}};
  const JobReport& r = out.report;
  if (r.nodes.empty() && r.node_errors.empty())
    throw Error(kExitError, "job: no node of job " + job + " answered (srun " +
                                (ps.timed_out ? "timed out after " + seconds(timeout_ms)
                                              : "exit " + std::to_string(ps.exit_code)) +
                                "): " + (ps.err.empty() ? ps.out.substr(0, 300) : ps.err),
                "gpumap must be at the same path on every node of the job: " + self);
  for (const std::string& n : r.missing_nodes) {
    std::string why = ps.timed_out ? "it did not answer within " + seconds(timeout_ms) + " (" + request.timeout_name + ")"
                      : !r.node_errors.empty() ? "it did not answer, or its ps failed (the node errors above)"
                                               : "it did not answer (is its slurmd up? scontrol show node " + n + ")";
    if (std::string line = srun_line_about(ps.err, n); !line.empty()) why += "; " + line;
    out.missing_why[n] = why;
  }
  return out;
}

JobRun read_job(Session& session, const JobRequest& request) {
  const Environment& env = session.env();
  const std::vector<std::string> strings = env.to_strings();
  return read_job(
      session, request,
      [&](std::vector<std::string> argv, int timeout_ms) {
        argv[0] = program(argv[0], env);
        return run_capture(argv, strings, timeout_ms);
      },
      self_exe());
}

}  // namespace gpumap
