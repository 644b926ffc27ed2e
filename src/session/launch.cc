#include "session/launch.h"

#include <algorithm>

#include "env/launcher.h"
#include "findings/rules.h"
#include "model/error.h"
#include "model/text.h"
#include "session/launch_plan.h"

namespace gpumap {
namespace {

/// Every CPU a GPU of `s` names (the simulated host's own CPUs, as its file gives them).
std::vector<int> all_cpus_of(const Snapshot& s) {
  std::vector<int> all;
  for (const Gpu& g : s.gpus)
    if (g.cpu_affinity)
      if (auto c = parse_cpu_list(*g.cpu_affinity)) all.insert(all.end(), c->begin(), c->end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace

LaunchPlan plan_launch(Session& session, const std::vector<std::string>& uuids, const LaunchRequest& request) {
  const Snapshot& s = session.snapshot();
  LaunchPlan p;
  p.uuids = uuids;
  p.visibility = launch_visibility(s, uuids, request.form);
  p.exports = p.visibility.variables();
  if (request.mark_bound) p.exports.emplace_back("GPUMAP_BOUND", p.visibility.cuda_visible_devices);
  p.env = session.env();
  for (const auto& [name, value] : p.exports) p.env.set(name, value);
  if (!request.bind_cpus) {
    p.cpus_not_bound = request.cpus_not_asked;
  } else if (session.driver().simulated) {
    // A simulated host's CPUs are another machine's: shown, never applied to this process or its
    // child (issue 43: `bind --simulate` pinned the real process to the host file's CPUs).
    std::vector<std::string> near(uuids.begin(), uuids.begin() + static_cast<long>(std::min(uuids.size(), request.cpu_gpus)));
    CpuChoice c = cpus_for(s, near, all_cpus_of(s));
    p.cpus_not_bound = c.cpus.empty() ? "simulated host: " + c.why_not
                                      : "simulated host: its GPUs' local CPUs " + format_cpu_list(c.cpus) +
                                            " would be bound there; this machine's affinity is left as it is";
  } else {
    std::vector<std::string> near(uuids.begin(), uuids.begin() + static_cast<long>(std::min(uuids.size(), request.cpu_gpus)));
    CpuChoice c = cpus_for(s, near, current_affinity());
    p.cpus = c.cpus;
    p.cpu_list = format_cpu_list(p.cpus);
    if (p.cpus.empty()) p.cpus_not_bound = c.why_not;
  }
  return p;
}

RankBinding plan_bind(Session& session, size_t gpus_per_rank, bool keep_visible, const LaunchRequest& request) {
  const Environment& env = session.env();
  // The innermost launcher wins (parse_launcher_env lists it first).
  LauncherEnv le = parse_launcher_env(env);
  if (le.local_ranks.empty())
    throw Error(kExitUsage,
                "bind: no local rank: none of " + local_rank_variables_words() +
                    " is set (gpumap never assumes rank 0: every rank would share one GPU)",
                "start it once per rank: `srun gpumap bind -- CMD`, `torchrun --no-python ... gpumap bind -- CMD`, "
                "`mpirun -np N gpumap bind -- CMD` (docs/launch.md)");
  const LocalRank& rank = le.local_ranks.front();
  if (!rank.error.empty() || !rank.value)
    throw Error(kExitUsage, "bind: " + rank.variable + "=`" + env.get(rank.variable).value_or("") + "`: " +
                                (rank.error.empty() ? "not a local rank" : rank.error),
                "the launcher must set it to this process's local rank (0, 1, ...)");
  RankBinding b;
  b.rank = rank;
  for (const LocalRank& lr : le.local_ranks)
    if (lr.value && *lr.value != *rank.value)
      b.notes.push_back(rank.variable + "=" + std::to_string(*rank.value) + " but " + lr.variable + "=" +
                        std::to_string(*lr.value) + "; using " + rank.variable + " (the innermost launcher's)");

  // Processes too: outside a scheduler's allocation, a rank told to use a busy GPU hears about it.
  const Snapshot& s = session.snapshot(ReadOptions{.processes = true, .topology = true});
  Mapping m = session.mapping();
  if (m.view.error != CudaInitError::kNone)
    throw Error(kExitUnavailable, "bind: CUDA would fail to initialise in this job (" +
                                      std::string(cuda_error_name(m.view.error)) + ": " + m.view.error_reason + ")",
                "run `gpumap map` inside the job for the details");
  // The job's GPUs: what CUDA shows, within the Slurm allocation (CUDA_VISIBLE_DEVICES unset in a step
  // without a device cgroup shows every GPU of the node, other jobs' too).
  Allocation alloc = session.allocation();
  std::vector<std::string> job = allowed_only(s, alloc, m.view.uuids);
  if (job.size() < m.view.uuids.size())
    b.notes.push_back("CUDA would show " + std::to_string(m.view.uuids.size()) + " GPUs, but this Slurm " +
                      (alloc.variable == "SLURM_STEP_GPUS" ? "step" : "job") + "'s allocation is " + alloc.words(s) +
                      ": the ranks share only those");
  size_t first = static_cast<size_t>(*rank.value) * gpus_per_rank;
  if (alloc.restricts && first + gpus_per_rank > job.size())
    throw Error(kExitUnavailable,
                "bind: local rank " + std::to_string(*rank.value) + " (" + rank.variable + ") needs " +
                    std::to_string(gpus_per_rank) + " GPU(s) of its own, but the allocation " + alloc.words(s) +
                    (job.size() < alloc.uuids.size() ? " (" + std::to_string(job.size()) + " of them visible to CUDA)" : "") +
                    " holds GPUs for " + std::to_string(job.size() / std::max<size_t>(gpus_per_rank, 1)) + " rank(s)",
                "start fewer ranks per node (or fewer GPUs per rank), or ask Slurm for more GPUs (srun --gpus=N)");
  if (first + gpus_per_rank > job.size()) {
    // Too few GPUs: say what limits them (the variable, the allocation, the container).
    std::string limit = visible_limit(session);
    if (auto cvd = session.env().get("CUDA_VISIBLE_DEVICES")) limit += " (CUDA_VISIBLE_DEVICES=" + *cvd + ")";
    try {
      rank_slice(job, rank, gpus_per_rank);
    } catch (const Error& e) {
      throw Error(e.exit_code(), e.what() + limit, e.hint());
    }
  }
  RankGpus gpus = bind_rank(job, rank, gpus_per_rank, keep_visible);
  // No scheduler chose these GPUs: say so when one of the rank's own is already busy with another
  // program (a shared box where torchrun's rank 0 would otherwise land on someone's job silently).
  if (alloc.variable.empty()) {
    for (const std::string& u : gpus.own) {
      const Gpu* g = s.find_device(u).gpu;
      if (!g || !g->processes) continue;
      std::vector<std::string> pids;
      for (const GpuProcess& p : *g->processes) pids.push_back(std::to_string(p.pid));
      if (pids.empty()) continue;
      std::string used = g->memory_used_mib ? ", " + std::to_string(*g->memory_used_mib) + " MiB used" : "";
      b.warnings.push_back("local rank " + std::to_string(*rank.value) + "'s GPU " + s.describe_with_uuid(u) +
                           " is busy: process(es) " + join(pids, ", ") + " run on it" + used +
                           ". No scheduler assigned these GPUs; to take idle ones, narrow the job first "
                           "(eval \"$(gpumap pick --gpus N --format env)\", then start the launcher) or use gpumap run");
    }
  }
  b.own = gpus.own;
  LaunchRequest r = request;
  r.cpu_gpus = gpus.own.size();
  b.plan = plan_launch(session, gpus.visible, r);
  if (keep_visible) {  // the rank's own GPUs come first; the marker says how many
    b.plan.exports.emplace_back("GPUMAP_BOUND_OWN", std::to_string(gpus.own.size()));
    b.plan.env.set("GPUMAP_BOUND_OWN", std::to_string(gpus.own.size()));
  } else {
    b.plan.env.unset("GPUMAP_BOUND_OWN");  // an outer bind --keep-visible's marker no longer applies
  }
  std::optional<uint32_t> own_first;
  if (keep_visible) own_first = static_cast<uint32_t>(gpus.own.size());
  b.advice = bound_rank_advice(rank.variable, own_first);
  return b;
}

namespace {

LaunchSpec spec_of(const LaunchPlan& plan, const std::vector<std::string>& argv) {
  LaunchSpec spec;
  spec.argv = argv;
  spec.env = plan.env.to_strings();
  spec.cpus = plan.cpus;
  return spec;
}

}  // namespace

LaunchResult run_leased(const LaunchPlan& plan, const std::vector<std::string>& argv, LeasedGpus& held) {
  LaunchSpec spec = spec_of(plan, argv);
  for (const Lease& l : held.leases) spec.keep_fds.push_back(l.fd());
  spec.on_started = [&](pid_t job) {  // readers then still name the holder should gpumap die first
    held.record.job = job;
    for (const Lease& l : held.leases) rewrite_lease_record(l, held.record);
  };
  return launch_and_wait(spec);
}

void exec_plan(const LaunchPlan& plan, const std::vector<std::string>& argv) { exec_replace(spec_of(plan, argv)); }

LaunchAnswer start_run(Session& session, const PickRequest& pick, const LeaseOptions& options, const LaunchRequest& request,
                       LeasedGpus& held) {
  held = lease_gpus(session, pick, options);
  LaunchAnswer a;
  a.plan = plan_launch(session, held.uuids, request);
  a.snapshot = &session.snapshot();
  a.argv = options.argv;
  a.lease = held.record;
  a.lease_dir = held.dir;
  return a;
}

BindAnswer start_bind(Session& session, size_t gpus_per_rank, bool keep_visible, const LaunchRequest& request,
                      const std::vector<std::string>& argv) {
  BindAnswer a;
  a.binding = plan_bind(session, gpus_per_rank, keep_visible, request);
  a.snapshot = &session.snapshot();
  a.argv = argv;
  return a;
}

}  // namespace gpumap
