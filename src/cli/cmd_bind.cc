// gpumap bind: one rank of srun / torchrun / mpirun gets its own GPU(s) and nearby CPUs, then
// gpumap becomes the rank's program (exec; no lease: the launcher owns the allocation).
#include <cstdio>
#include <optional>
#include <iostream>

#include "model/text.h"
#include "cli/command.h"
#include "session/launch_plan.h"
#include "env/launcher.h"
#include "findings/rules.h"
#include "model/error.h"
#include "os/launch.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (!args.has_rest() || args.rest().empty())
    throw Error(kExitUsage, "bind: no command given",
                "put the command after `--`: srun gpumap bind -- python3 train.py");
  long per_rank = args.integer("--gpus-per-rank", kBoundGpusPerRank).value_or(1);
  CvdForm form = cvd_form(args);

  // The innermost launcher wins (parse_launcher_env lists it first).
  LauncherEnv le = parse_launcher_env(ctx.env());
  const LocalRank* rank = le.local_ranks.empty() ? nullptr : &le.local_ranks.front();
  if (rank && (!rank->error.empty() || !rank->value))
    throw Error(kExitUsage, "bind: " + rank->variable + "=`" + ctx.env().get(rank->variable).value_or("") + "`: " +
                                (rank->error.empty() ? "not a local rank" : rank->error),
                "the launcher must set it to this process's local rank (0, 1, ...)");
  if (!rank)
    throw Error(kExitUsage,
                "bind: no local rank: none of SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, "
                "PMI_LOCAL_RANK, LOCAL_RANK is set (gpumap never assumes rank 0: every rank would share one GPU)",
                "start it once per rank: `srun gpumap bind -- CMD`, `torchrun --no-python ... gpumap bind -- CMD`, "
                "`mpirun -np N gpumap bind -- CMD` (docs/launch.md)");
  for (const LocalRank& lr : le.local_ranks)
    if (lr.value && *lr.value != *rank->value)
      std::fprintf(stderr, "gpumap bind: note: %s=%u but %s=%u; using %s (the innermost launcher's)\n",
                   rank->variable.c_str(), *rank->value, lr.variable.c_str(), *lr.value, rank->variable.c_str());

  const Snapshot& s = ctx.snapshot(ReadOptions{.processes = false, .topology = true});
  Mapping m = ctx.mapping();
  if (m.view.error != CudaInitError::kNone)
    throw Error(kExitUnavailable, "bind: CUDA would fail to initialise in this job (" +
                                      std::string(cuda_error_name(m.view.error)) + ": " + m.view.error_reason + ")",
                "run `gpumap map` inside the job for the details");
  const bool keep_visible = args.has("--keep-visible");
  RankBinding b = bind_rank(m.view.uuids, *rank, static_cast<size_t>(per_rank), keep_visible);
  const std::vector<std::string>& mine = b.own;

  Environment env = ctx.env();
  LaunchVisibility vis = launch_visibility(s, b.visible, form);
  env.set("CUDA_DEVICE_ORDER", vis.cuda_device_order);
  env.set("CUDA_VISIBLE_DEVICES", vis.cuda_visible_devices);
  env.set("GPUMAP_BOUND", vis.cuda_visible_devices);  // tells `gpumap doctor` the narrowing is deliberate
  std::vector<std::pair<std::string, std::string>> exports = vis.variables();
  exports.emplace_back("GPUMAP_BOUND", vis.cuda_visible_devices);
  if (keep_visible) {
    env.set("GPUMAP_BOUND_OWN", std::to_string(mine.size()));  // the rank's own GPUs come first
    exports.emplace_back("GPUMAP_BOUND_OWN", std::to_string(mine.size()));
  } else {
    env.unset("GPUMAP_BOUND_OWN");  // an outer bind --keep-visible's marker no longer applies
  }
  LaunchSpec spec{args.rest(), env.to_strings(), {}, {}, {}};
  std::string cpu_note = "not bound (--no-cpu-bind)";
  if (!args.has("--no-cpu-bind")) {
    CpuChoice c = cpus_for(s, mine, current_affinity());
    spec.cpus = c.cpus;
    cpu_note = spec.cpus.empty() ? "not bound (" + c.why_not + ")" : format_cpu_list(spec.cpus);
  }
  std::string line = "gpumap bind: local rank " + std::to_string(*rank->value) + " (" + rank->variable + ")";
  for (size_t i = 0; i < b.visible.size(); ++i) {
    const Gpu* g = s.find_uuid(b.visible[i]);
    // Its own GPUs with their UUIDs, then the other ranks' (--keep-visible) by index.
    line += std::string(i == 0 ? ": " : i == mine.size() ? "; the other ranks' kept visible: " : ", ") + "cuda:" +
            std::to_string(i) + " -> GPU " + (g ? std::to_string(g->nvml_index) : "?") +
            (i < mine.size() ? " " + b.visible[i] : std::string());
  }
  std::optional<uint32_t> own_first;
  if (keep_visible) own_first = static_cast<uint32_t>(mine.size());
  line += "; CPUs " + cpu_note + "; " + vis.assignments() + (vis.note.empty() ? "" : " (" + vis.note + ")") +
          "\ngpumap bind: " + bound_rank_advice(rank->variable, own_first) + "\n";
  Json doc = launch_json(s, b.visible, exports);
  doc["own_devices"] = mine.size();
  doc["command"] = args.rest();
  doc["cpus"] = spec.cpus.empty() ? Json(nullptr) : Json(format_cpu_list(spec.cpus));
  doc["lease"] = nullptr;  // bind takes none: the launcher owns the allocation
  doc["local_rank"] = {{"variable", rank->variable}, {"value", *rank->value}};
  report_launch(args, ctx, doc, line);
  exec_replace(spec);
}

}  // namespace

Command bind_command() {
  return {"bind", "give each launcher rank its own GPU(s) and nearby CPUs, then exec the command",
          "gpumap bind [--gpus-per-rank N] [--keep-visible] [--no-cpu-bind] [--cvd-form index|uuid] [--json]\n"
          "            [--json-file FILE] -- CMD [ARGS...]",
          "Run once per rank under srun, `torchrun --no-python`, or mpirun.  Reads the local rank from\n"
          "LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, PMI_LOCAL_RANK or\n"
          "SLURM_LOCALID, in that order: the innermost launcher's wins (exit 2 when none is set: it\n"
          "never assumes 0).  Rank r gets the GPUs\n"
          "cuda:[r*N, r*N+N) of those the job can see: it sets CUDA_DEVICE_ORDER=PCI_BUS_ID and\n"
          "CUDA_VISIBLE_DEVICES to their PCI-order indices (--cvd-form uuid: their UUIDs; MIG devices\n"
          "always by UUID), GPUMAP_BOUND to the same value (so `gpumap doctor` in the rank knows the\n"
          "narrowing is deliberate), binds CPUs local to them (within the inherited set), prints the\n"
          "binding on stderr (--json: as one JSON document; --json-file FILE: also to FILE) and execs\n"
          "CMD (PATH lookup, no shell).  The rank keeps LOCAL_RANK etc., but\n"
          "sees only its own GPU(s): its program must use cuda:0, not cuda:LOCAL_RANK (stderr says so).\n"
          "--keep-visible: the rank sees every GPU of the job instead, rotated so its own come first\n"
          "(cuda:0 is still its GPU; the other ranks' follow, for CUDA IPC and peer access), and\n"
          "GPUMAP_BOUND_OWN says how many are its own; cuda:LOCAL_RANK is then another rank's GPU.\n"
          "Takes no lease.  Exit 6 when the job\n"
          "sees too few GPUs for this rank; 127/126 when CMD cannot be started.  See docs/launch.md.",
          {{"--gpus-per-rank", true, false, "N", "GPUs per rank (default 1)"},
           {"--keep-visible", false, false, "",
            "show the rank every GPU of the job, its own first (CUDA IPC and peer access keep working)"},
           {"--no-cpu-bind", false, false, "", "keep the inherited CPU affinity"},
           cvd_form_option(), json_file_option()},
          false, run, false, true};
}

}  // namespace gpumap
