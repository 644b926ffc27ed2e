// gpumap which GPU...: what to set to get exactly these physical GPUs, in this order.
#include <cctype>
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "output/render.h"
#include "session/which.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  WhichAnswer a = which_gpus(ctx.session(), env, args.positionals());
  const Snapshot& s = ctx.session().snapshot();
  if (ctx.json()) {
    Json devices = cuda_devices_json(s, a.targets);
    for (size_t t = 0; t < a.targets.size(); ++t)
      devices[t]["pci_position"] = a.pci_positions[t] ? Json(*a.pci_positions[t]) : Json(nullptr);
    Json j = document(s);
    j["asked_cuda"] = asked_cuda_json(a.asked_cuda);
    j["devices"] = devices;
    j["uuid_form"] = {{"CUDA_VISIBLE_DEVICES", a.by_uuid.cuda_visible_devices}};
    j["index_form"] = a.by_index ? Json({{"CUDA_DEVICE_ORDER", a.by_index->cuda_device_order},
                                         {"CUDA_VISIBLE_DEVICES", a.by_index->cuda_visible_devices}})
                                 : Json(nullptr);
    j["docker_run"] = a.docker_run;
    j["cuda"] = mapping_json(s, a.mapping);
    std::cout << dump(j);
    return kExitOk;
  }
  for (const CudaOrdinalAnswer& c : a.asked_cuda) {
    std::string line = c.sentence;
    line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
    std::cout << fit_line(line + ".") << "\n";
  }
  // Prose fits the terminal (fit_line: wrapped at words); the lines to paste are never wrapped.
  // Both are printed printable: UUIDs and GPU names come from the driver.
  std::string out = fit_line(a.targets.size() == 1 ? std::string("To get exactly this GPU as cuda:0:")
                                                   : "To get exactly these GPUs as cuda:0.." + std::to_string(a.targets.size() - 1) +
                                                         ", in this order:") +
                    "\n  export CUDA_VISIBLE_DEVICES=" + printable(a.by_uuid.cuda_visible_devices) + "\n";
  if (a.by_index)
    out += "\n" + fit_line("or, by index (indices count in PCI order, which is nvidia-smi's only with this order set):") +
           "\n  export " + printable(a.by_index->assignments()) + "\n";
  else
    out += "\n" + fit_line("(no index form: " + a.no_index_reason + ")");
  out += "\n" + fit_line("or, for a container (the runtime renumbers the GPUs it injects from 0, in PCI order):") + "\n  " +
         printable(a.docker_run) + " IMAGE ...\n";
  out += "\n" + fit_line("The UUID form survives reboots, driver updates and containers; indices may not.") + "\nNow:\n";
  for (const std::string& l : a.now) out += fit_line("  " + l);
  std::cout << out;
  return kExitOk;
}

}  // namespace

Command which_command() {
  Command c{"which", "what to set to get exactly these physical GPUs, in this order",
          "gpumap which GPU... [--json] [--env NAME=VALUE]... [--unset NAME]...",
          "GPU is an nvidia-smi index, a UUID or a unique prefix of one (MIG device UUIDs too), a PCI\n"
          "bus id in any form (3b:00.0, 0000:3B:00.0, 00000000:3B:00.0), or cuda:N: the GPU that cuda:N\n"
          "is in this environment (said first: `gpumap which cuda:4`).  Prints the CUDA_VISIBLE_DEVICES\n"
          "value that makes them cuda:0, cuda:1, ... in the order given: by UUID (recommended), by index\n"
          "with CUDA_DEVICE_ORDER=PCI_BUS_ID, and the `docker run --gpus` form.  Also says which cuda:N\n"
          "each one is in the current environment, or that it is not visible.  A bad or ambiguous GPU\n"
          "exits 2 and lists the GPUs (inside a container with the host's numbers, in a Slurm step under\n"
          "a device cgroup with Slurm's ids); a GPU outside the Slurm step's (or job's) allocation\n"
          "exits 6, naming it: the advice would put the program on another job's GPU.",
          env_options(), true, run};
  c.positional_value = "GPU";
  return c;
}

}  // namespace gpumap
