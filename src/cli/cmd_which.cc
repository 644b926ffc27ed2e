// gpumap which GPU...: what to set to get exactly these physical GPUs, in this order.
#include <iostream>

#include "cli/command.h"
#include "findings/rules.h"
#include "model/error.h"
#include "output/render.h"
#include "resolve/gpu_selector.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (args.positionals().empty())
    throw Error(kExitUsage, "which needs at least one GPU",
                "e.g. gpumap which 2 3   (nvidia-smi indices, UUIDs or unique prefixes, or PCI bus ids)");
  Environment env = apply_env_options(ctx.env(), args);
  const Snapshot& s = ctx.snapshot();
  std::vector<const Gpu*> gpus = select_gpus(s, args.positionals());
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (gpus[k] == gpus[i])
        throw Error(kExitUsage, "GPU `" + gpus[i]->uuid + "` is named twice: a repeated GPU makes cuInit fail",
                    "name each GPU once");
  Mapping m = ctx.mapping(env, false);
  std::vector<std::string> pci = pci_order(s);

  std::string uuid_form, index_form;
  bool index_possible = true;
  Json rows = Json::array();
  std::vector<std::string> lines;
  for (const Gpu* g : gpus) {
    if (g->mig_enabled.value_or(false) && !g->mig_devices.empty()) {
      // CUDA shows a MIG-mode GPU's MIG devices, not the GPU: name those.
      for (const MigDevice& md : g->mig_devices) uuid_form += (uuid_form.empty() ? "" : ",") + md.uuid;
    } else {
      uuid_form += (uuid_form.empty() ? "" : ",") + g->uuid;
    }
    int pos = -1;
    for (size_t i = 0; i < pci.size(); ++i)
      if (uuid_hex(pci[i]) == uuid_hex(g->uuid)) pos = static_cast<int>(i);
    if (pos < 0) index_possible = false;
    else index_form += (index_form.empty() ? "" : ",") + std::to_string(pos);
    int now = -1;
    for (size_t i = 0; i < m.view.uuids.size(); ++i)
      if (uuid_hex(m.view.uuids[i]) == uuid_hex(g->uuid)) now = static_cast<int>(i);
    rows.push_back({{"nvml_index", g->nvml_index},
                    {"uuid", g->uuid},
                    {"pci_bus_id", g->pci_bus_id},
                    {"name", g->name},
                    {"pci_position", pos >= 0 ? Json(pos) : Json(nullptr)},
                    {"cuda_ordinal_now", now >= 0 ? Json(now) : Json(nullptr)}});
    std::string line = "nvidia-smi GPU " + std::to_string(g->nvml_index) + " (" + g->uuid + ", " + g->pci_bus_id + "): ";
    if (m.view.error != CudaInitError::kNone) line += std::string("none now (cuInit would fail: ") + cuda_error_name(m.view.error) + ")";
    else if (now >= 0) line += "cuda:" + std::to_string(now) + " in the current environment";
    else if (g->mig_enabled.value_or(false)) line += "in MIG mode: CUDA shows its MIG devices, not the GPU";
    else line += "not visible in the current environment";
    lines.push_back(line);
  }
  std::string set_uuid = "CUDA_VISIBLE_DEVICES=" + uuid_form;
  std::string set_index = "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=" + index_form;
  if (ctx.json()) {
    Json j;
    j["gpus"] = rows;
    j["uuid_form"] = {{"CUDA_VISIBLE_DEVICES", uuid_form}};
    j["index_form"] = index_possible ? Json({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", index_form}})
                                     : Json(nullptr);
    std::cout << dump(j);
    return kExitOk;
  }
  std::cout << "To get exactly these GPUs as cuda:0.." << gpus.size() - 1 << ", in this order:\n\n"
            << "  export " << set_uuid << "\n";
  if (index_possible)
    std::cout << "\nor, by index (indices count in PCI order, which is nvidia-smi's only with this order set):\n\n"
              << "  export " << set_index << "\n";
  else
    std::cout << "\n(no index form: a GPU in MIG mode is named by its MIG devices' UUIDs; drivers before R570\n"
                 " give a process only the first MIG device listed)\n";
  std::cout << "\nThe UUID form survives reboots, driver updates and containers; indices may not.\n\nNow:\n";
  for (const std::string& l : lines) std::cout << "  " << l << "\n";
  return kExitOk;
}

}  // namespace

Command which_command() {
  return {"which", "what to set to get exactly these physical GPUs, in this order",
          "gpumap which GPU... [--json] [--env NAME=VALUE]... [--unset NAME]...",
          "GPU is an nvidia-smi index, a UUID or a unique prefix of one, or a PCI bus id in any form\n"
          "(3b:00.0, 0000:3B:00.0, 00000000:3B:00.0).  Prints the CUDA_VISIBLE_DEVICES value that\n"
          "makes them cuda:0, cuda:1, ... in the order given: by UUID (recommended), and by index\n"
          "with CUDA_DEVICE_ORDER=PCI_BUS_ID.  Also says which cuda:N each one is in the current\n"
          "environment, or that it is not visible.  A bad or ambiguous GPU exits 2 and lists the GPUs.",
          env_options(), true, run};
}

}  // namespace gpumap
