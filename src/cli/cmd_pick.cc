// gpumap pick: choose free GPUs by policy (memory, load, processes, leases, topology).  Its options
// and their request are cli/pick_options.cc's (run shares them).
#include <iostream>

#include "model/text.h"
#include "cli/pick_options.h"
#include "model/error.h"
#include "output/pick_view.h"
#include "output/render.h"

namespace gpumap {

namespace {

int run(const Args& args, Context& ctx) {
  PickRequest req = pick_request(args);
  // pick holds nothing, so it cannot wait: the waiting form is run's.
  req.names.wait = "--wait SECONDS (gpumap run)";
  std::string format = args.value("--format").value_or("");
  if (!format.empty() && format != "env" && format != "uuid" && format != "index")
    throw Error(kExitUsage, "pick: --format `" + format + "` is not env, uuid or index", "use --format env, uuid or index (or --json)");
  PickAnswer a = pick_now(ctx.session(), req, cvd_form(args));
  if (ctx.json()) {
    std::cout << dump(pick_json(a));
  } else if (format == "env") {
    std::cout << printable_lines(pick_exports(a));
  } else if (format == "uuid") {
    std::cout << printable_lines(join(a.uuids, ",") + "\n");
  } else if (format == "index") {
    // Indices are only right together with CUDA_DEVICE_ORDER=PCI_BUS_ID: always written with it.
    if (a.by_index.form != CvdForm::kIndex)
      throw Error(kExitUsage, "pick: no index form on this host (" + a.by_index.note + ")", "use --format uuid or env");
    std::cout << printable_lines(a.by_index.assignments() + "\n");
  } else {
    std::cout << pick_text(a);
  }
  return kExitOk;
}

}  // namespace

Command pick_command() {
  std::vector<OptionSpec> opts = pick_options();
  opts.push_back({"--format", true, false, "env|uuid|index",
                  "print only: shell exports, UUIDs, or `CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=<indices>` "
                  "(indices are right only with that order: use it whole, e.g. env $(gpumap pick --format index) CMD)"});
  opts.push_back(cvd_form_option());
  return {"pick", "choose free GPUs (memory, load, processes, leases, NVLink/CPU topology)",
          "gpumap pick [--gpus N] [--min-free-mib M] [--max-util PERCENT] [--include GPU]... [--exclude GPU]...\n"
          "            [--allow-busy] [--allow-unknown] [--cvd-form index|uuid] [--json | --format env|uuid|index]",
          "Chooses GPUs among those this process can see (CUDA_VISIBLE_DEVICES or the scheduler may\n"
          "restrict them; in a Slurm step only its allocation's): never one leased by a running `gpumap run`, nor one in MIG mode; by default\n"
          "not one running other processes, nor one whose process list (or, with --max-util, utilisation)\n"
          "the driver could not read (--allow-unknown takes those too); then the most free memory and least load.  For several GPUs,\n"
          "NVLink-connected sets first, then GPUs local to the same CPUs.  GPU arguments take an\n"
          "nvidia-smi index, a UUID or unique UUID prefix, or a PCI bus id.  pick reserves nothing: use\n"
          "`eval \"$(gpumap pick --format env)\"` for a quick shell, `gpumap run` to hold the GPUs.\n"
          "Exit 6 when not enough GPUs qualify (the message says what blocked each one).",
          opts, false, run};
}

}  // namespace gpumap
