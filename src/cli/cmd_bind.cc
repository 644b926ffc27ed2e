// gpumap bind: one rank of srun / torchrun / mpirun gets its own GPU(s) and nearby CPUs, then
// gpumap becomes the rank's program (exec; no lease: the launcher owns the allocation).
#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/launch_view.h"
#include "session/launch.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (!args.has_rest() || args.rest().empty())
    throw Error(kExitUsage, "bind: no command given",
                "put the command after `--`: srun gpumap bind -- python3 train.py");
  long per_rank = args.integer("--gpus-per-rank", kBoundGpusPerRank).value_or(1);
  LaunchRequest launch{.form = cvd_form(args), .bind_cpus = !args.has("--no-cpu-bind"), .mark_bound = true,
                       .cpus_not_asked = "--no-cpu-bind"};
  BindAnswer a = start_bind(ctx.session(), static_cast<size_t>(per_rank), args.has("--keep-visible"), launch, args.rest());
  std::fputs(bind_messages(a).c_str(), stderr);
  report_launch(args, ctx, bind_json(a), bind_text(a));
  exec_plan(a.binding.plan, args.rest());
}

}  // namespace

Command bind_command() {
  return {"bind", "give each launcher rank its own GPU(s) and nearby CPUs, then exec the command",
          "gpumap bind [--gpus-per-rank N] [--keep-visible] [--no-cpu-bind] [--cvd-form index|uuid] [--json]\n"
          "            [--json-file FILE] -- CMD [ARGS...]",
          "Run once per rank under srun, `torchrun --no-python`, or mpirun.  Reads the local rank from\n"
          "LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK,\n"
          "PMI_LOCAL_RANK or SLURM_LOCALID, in that order: the innermost launcher's wins (exit 2 when\n"
          "none is set: it never assumes 0).  Rank r gets the GPUs\n"
          "cuda:[r*N, r*N+N) of those the job can see (within a Slurm step's allocation, also where\n"
          "CUDA_VISIBLE_DEVICES is unset): it sets CUDA_DEVICE_ORDER=PCI_BUS_ID and\n"
          "CUDA_VISIBLE_DEVICES to their PCI-order indices (--cvd-form uuid: their UUIDs; MIG devices\n"
          "always by UUID), GPUMAP_BOUND to the same value (so `gpumap doctor` in the rank knows the\n"
          "narrowing is deliberate), binds CPUs local to them (within the inherited set), prints the\n"
          "binding on stderr (--json: as one JSON document; --json-file FILE: also to FILE) and execs\n"
          "CMD (PATH lookup, no shell).  The rank keeps LOCAL_RANK etc., but\n"
          "sees only its own GPU(s): its program must use cuda:0, not cuda:LOCAL_RANK (stderr says so).\n"
          "--keep-visible: the rank sees every GPU of the job instead, rotated so its own come first\n"
          "(cuda:0 is still its GPU; the other ranks' follow, for CUDA IPC and peer access), and\n"
          "GPUMAP_BOUND_OWN says how many are its own; cuda:LOCAL_RANK is then another rank's GPU.\n"
          "Takes no lease; where no scheduler chose the GPUs it warns when the rank's own GPU already\n"
          "runs another program.  Exit 6 when the job\n"
          "sees too few GPUs for this rank; 127/126 when CMD cannot be started.  See docs/launch.md.",
          {{"--gpus-per-rank", true, false, "N", "GPUs per rank (default 1)"},
           {"--keep-visible", false, false, "",
            "show the rank every GPU of the job, its own first (CUDA IPC and peer access keep working)"},
           {"--no-cpu-bind", false, false, "", "keep the inherited CPU affinity"},
           cvd_form_option(), json_file_option()},
          false, run, false, true};
}

}  // namespace gpumap
