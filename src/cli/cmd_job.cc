// gpumap job [JOBID]: every node of a running Slurm job in one table, through Slurm itself.
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "os/subprocess.h"
#include "output/render.h"
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

int run(const Args& args, Context& ctx) {
  if (args.positionals().size() > 1) throw Error(kExitUsage, "job takes one JOBID", "gpumap job [JOBID]");
  std::string job = args.positionals().empty() ? ctx.session().env().get("SLURM_JOB_ID").value_or("") : args.positionals()[0];
  if (job.empty())
    throw Error(kExitUsage, "job: no JOBID given and $SLURM_JOB_ID is not set",
                "gpumap job JOBID   (squeue --me lists your jobs)");
  if (job.find_first_not_of("0123456789_") != std::string::npos)
    throw Error(kExitUsage, "job: `" + job + "` is not a Slurm job id", "gpumap job 1234");
  int timeout_ms = static_cast<int>(args.integer("--timeout", 1, 3600).value_or(60) * 1000);

  std::vector<std::string> env = ctx.session().env().to_strings();
  ProcResult sc = run_capture({program("scontrol", ctx.session().env()), "show", "job", "-d", job}, env, timeout_ms);
  if (sc.timed_out)
    throw Error(kExitError, "job: scontrol show job " + job + " timed out after " + std::to_string(timeout_ms / 1000) + " s",
                "check that slurmctld answers (`scontrol ping`), or give it longer with --timeout SECONDS");
  if (sc.exit_code != 0) {
    std::string why = !sc.err.empty() ? sc.err : !sc.spawn_error.empty() ? sc.spawn_error : "exit " + std::to_string(sc.exit_code);
    throw Error(kExitError, "job: scontrol show job " + job + " failed: " + why,
                "check the id with squeue; the job must be running");
  }
  std::vector<std::string> extra;
  if (ctx.session().seams().simulate) extra = {"--simulate", *ctx.session().seams().simulate};
  std::vector<std::string> job_nodes = parse_job_nodes(sc.out);
  std::map<std::string, std::vector<uint32_t>> allocation = parse_job_gpu_ids(sc.out);
  ProcResult ps = run_capture(job_fanout_argv(program("srun", ctx.session().env()), job, self_exe(), extra, job_nodes.size(),
                                              uniform_gpus_per_node(allocation, job_nodes)),
                              env, timeout_ms);
  if (!ps.spawn_error.empty()) throw Error(kExitError, "job: srun into job " + job + " failed: " + ps.spawn_error, "");
  // A node that does not answer in time (hung, or its slurmd gone: srun then says "Task launch
  // ... failed on node N" and exits non-zero, after the others' output) must not hide the
  // others: what came back is the report, the rest is named.
  JobReport r = build_job_report(job, split_labelled_output(ps.out), allocation, job_nodes);
  if (r.nodes.empty() && r.node_errors.empty())
    throw Error(kExitError, "job: no node of job " + job + " answered (srun " +
                                (ps.timed_out ? "timed out after " + std::to_string(timeout_ms / 1000) + " s"
                                              : "exit " + std::to_string(ps.exit_code)) +
                                "): " + (ps.err.empty() ? ps.out.substr(0, 300) : ps.err),
                "gpumap must be at the same path on every node of the job: " + self_exe());
  std::string missing_why =
      ps.timed_out ? "it did not answer within " + std::to_string(timeout_ms / 1000) + " s (--timeout)"
      : !r.node_errors.empty() ? "it did not answer, or its ps failed (the node errors above)"
                               : "it did not answer (is its slurmd up? scontrol show node NODE)";

  if (ctx.json()) {
    Json j;
    j["job_id"] = r.job_id;
    j["nodes"] = r.nodes;
    j["allocation_known"] = r.allocation_known;
    Json procs = Json::array();
    for (const JobProcess& p : r.processes)
      procs.push_back({{"node", p.node}, {"rank", json_or_null(p.rank)}, {"pid", p.pid}, {"nvml_index", p.nvml_index},
                       {"uuid", p.uuid}, {"cuda_ordinal", json_or_null(p.ordinal)},
                       {"used_memory_mib", json_or_null(p.used_memory_mib)}, {"command", json_or_null(p.command)}});
    j["processes"] = procs;
    Json gpus = Json::array();
    for (const JobGpu& g : r.gpus)
      gpus.push_back({{"node", g.node}, {"nvml_index", g.nvml_index}, {"uuid", g.uuid}, {"pci_bus_id", g.pci_bus_id},
                      {"minor_number", json_or_null(g.minor_number)}, {"allocated", g.allocated}});
    j["gpus"] = gpus;
    j["other_processes"] = r.other_processes;
    j["node_errors"] = r.node_errors;
    j["missing_nodes"] = r.missing_nodes;
    j["findings"] = findings_json(r.findings);
    std::cout << dump(j);
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const JobProcess& p : r.processes)
      rows.push_back({p.node, na(p.rank), std::to_string(p.pid), std::to_string(p.nvml_index), p.uuid,
                      p.ordinal ? "cuda:" + std::to_string(*p.ordinal) : "-",
                      p.used_memory_mib ? std::to_string(*p.used_memory_mib) + " MiB" : "N/A", na(p.command)});
    std::cout << "job " << r.job_id << ": " << r.nodes.size() << " node(s), " << r.processes.size()
              << " GPU process(es)" << (r.allocation_known ? "" : "; the job's GPU allocation is unknown") << "\n\n";
    if (!rows.empty())
      std::cout << render_table({"NODE", "RANK", "PID", "NVIDIA-SMI", "UUID", "CUDA", "MEMORY", "COMMAND"}, rows);
    for (const std::string& e : r.node_errors) std::cout << printable_lines("node error: " + e + "\n");  // srun's output
    for (const std::string& n : r.missing_nodes) {
      std::string why = missing_why;
      if (size_t at = why.find("NODE"); at != std::string::npos) why.replace(at, 4, n);
      std::istringstream err(ps.err);  // srun's own words about that node, when it has some
      for (std::string line; std::getline(err, line);)
        if (line.find("node " + n + ":") != std::string::npos) {
          why += "; " + line;
          break;
        }
      std::cout << printable_lines("no report from node " + n + ": " + why + "; the report covers the other nodes\n");
    }
    std::cout << render_findings(r.findings);
  }
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
          "JOBID defaults to $SLURM_JOB_ID.  Exit 7 when a finding is an error, else 8 when a node gave no\n"
          "report; 1 when scontrol failed or no node answered, 2 on usage errors.",
          {{"--timeout", true, false, "SECONDS", "give up on scontrol/srun after this long (default 60)"}},
          true,
          run};
}

}  // namespace gpumap
