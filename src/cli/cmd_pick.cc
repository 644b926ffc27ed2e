// gpumap pick: choose free GPUs by policy (memory, load, processes, leases, topology).  Its options
// and their request are cli/pick_options.cc's (run shares them).
#include <algorithm>
#include <iostream>
#include <iterator>
#include <optional>
#include <utility>

#include "cli/pick_options.h"
#include "model/error.h"
#include "output/pick_view.h"

namespace gpumap {

namespace {

// --format's word (or --json) as the renderer's form; the word is checked before anything is picked.
PickFormat pick_format(const Args& args, bool json) {
  std::optional<std::string> word = args.value("--format");
  const std::pair<const char*, PickFormat> kWords[] = {
      {"env", PickFormat::kEnv}, {"uuid", PickFormat::kUuid}, {"index", PickFormat::kIndex}};
  PickFormat form = PickFormat::kText;
  if (word && !word->empty()) {
    auto it = std::find_if(std::begin(kWords), std::end(kWords), [&](const auto& w) { return *word == w.first; });
    if (it == std::end(kWords))
      throw Error(kExitUsage, "pick: --format `" + *word + "` is not env, uuid or index", "use --format env, uuid or index (or --json)");
    form = it->second;
  }
  return json ? PickFormat::kJson : form;
}

int run(const Args& args, Context& ctx) {
  PickRequest req = pick_request(args);
  // pick holds nothing, so it cannot wait: the waiting form is run's.
  req.names.wait = "--wait SECONDS (gpumap run)";
  PickFormat format = pick_format(args, ctx.json());
  std::cout << render_pick(pick_now(ctx.session(), req, cvd_form(args)), format);
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
