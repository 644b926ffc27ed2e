// gpumap which GPU...: what to set to get exactly these physical GPUs, in this order.
#include <cctype>
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
  Mapping m = ctx.mapping(env, false);
  // "cuda:N" names what cuda:N is in this environment (the mapping `map` shows).
  std::vector<std::string> specs = args.positionals();
  std::vector<CudaOrdinalAnswer> asked;
  for (std::string& spec : specs)
    if (parse_cuda_ordinal(spec)) {
      asked.push_back(answer_cuda_ordinal(s, m.view, spec));
      spec = asked.back().uuid;
    }
  std::vector<const Gpu*> gpus = select_gpus(s, specs);
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (gpus[k] == gpus[i])
        throw Error(kExitUsage, "GPU `" + gpus[i]->uuid + "` is named twice: a repeated GPU makes cuInit fail",
                    "name each GPU once");
  std::vector<std::string> cuda_devices;  // what CUDA_VISIBLE_DEVICES must name, in order
  Json rows = Json::array();
  std::vector<std::string> lines;
  for (const Gpu* g : gpus) {
    if (g->mig_enabled.value_or(false) && !g->mig_devices.empty()) {
      // CUDA shows a MIG-mode GPU's MIG devices, not the GPU: name those.
      for (const MigDevice& md : g->mig_devices) cuda_devices.push_back(md.uuid);
    } else {
      cuda_devices.push_back(g->uuid);
    }
    std::optional<size_t> pci_pos = pci_index_of(s, g->uuid);
    int pos = pci_pos && !g->mig_enabled.value_or(false) ? static_cast<int>(*pci_pos) : -1;
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
  std::string uuid_form = launch_visibility(s, cuda_devices, CvdForm::kUuid).cuda_visible_devices;
  LaunchVisibility by_index = launch_visibility(s, cuda_devices, CvdForm::kIndex);
  bool index_possible = by_index.form == CvdForm::kIndex;
  std::string set_uuid = "CUDA_VISIBLE_DEVICES=" + uuid_form;
  if (ctx.json()) {
    Json j;
    Json cuda = Json::array();
    for (const CudaOrdinalAnswer& a : asked)
      cuda.push_back({{"spec", a.spec}, {"cuda_ordinal", a.ordinal}, {"uuid", a.uuid},
                      {"nvml_index", a.nvml_index >= 0 ? Json(a.nvml_index) : Json(nullptr)}, {"text", a.sentence}});
    j["asked_cuda"] = cuda;
    j["gpus"] = rows;
    j["uuid_form"] = {{"CUDA_VISIBLE_DEVICES", uuid_form}};
    j["index_form"] = index_possible ? Json({{"CUDA_DEVICE_ORDER", by_index.cuda_device_order},
                                            {"CUDA_VISIBLE_DEVICES", by_index.cuda_visible_devices}})
                                     : Json(nullptr);
    std::cout << dump(j);
    return kExitOk;
  }
  for (const CudaOrdinalAnswer& a : asked) {
    std::string line = a.sentence;
    line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
    std::cout << line << ".\n\n";
  }
  std::cout << "To get exactly these GPUs as cuda:0.." << gpus.size() - 1 << ", in this order:\n\n"
            << "  export " << set_uuid << "\n";
  if (index_possible)
    std::cout << "\nor, by index (indices count in PCI order, which is nvidia-smi's only with this order set):\n\n"
              << "  export " << by_index.assignments() << "\n";
  else if (s.any_mig())
    std::cout << "\n(no index form: MIG devices have no index, and on a host with MIG enabled gpumap does not\n"
                 " predict CUDA's indices; drivers before R570 give a process only the first MIG device listed)\n";
  else
    std::cout << "\n(no index form: " << by_index.note << ")\n";
  std::cout << "\nThe UUID form survives reboots, driver updates and containers; indices may not.\n\nNow:\n";
  for (const std::string& l : lines) std::cout << "  " << l << "\n";
  return kExitOk;
}

}  // namespace

Command which_command() {
  return {"which", "what to set to get exactly these physical GPUs, in this order",
          "gpumap which GPU... [--json] [--env NAME=VALUE]... [--unset NAME]...",
          "GPU is an nvidia-smi index, a UUID or a unique prefix of one, a PCI bus id in any form\n"
          "(3b:00.0, 0000:3B:00.0, 00000000:3B:00.0), or cuda:N: the GPU that cuda:N is in this\n"
          "environment (said first: `gpumap which cuda:4`).  Prints the CUDA_VISIBLE_DEVICES value that\n"
          "makes them cuda:0, cuda:1, ... in the order given: by UUID (recommended), and by index\n"
          "with CUDA_DEVICE_ORDER=PCI_BUS_ID.  Also says which cuda:N each one is in the current\n"
          "environment, or that it is not visible.  A bad or ambiguous GPU exits 2 and lists the GPUs.",
          env_options(), true, run};
}

}  // namespace gpumap
