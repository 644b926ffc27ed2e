// gpumap which GPU...: what to set to get exactly these physical GPUs, in this order.
#include <cctype>
#include <iostream>

#include "cli/command.h"
#include "model/text.h"
#include "model/error.h"
#include "model/uuid.h"
#include "output/render.h"
#include "resolve/gpu_selector.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  if (args.positionals().empty())
    throw Error(kExitUsage, "which needs at least one GPU",
                "e.g. gpumap which 2 3   (nvidia-smi indices, UUIDs or unique prefixes, MIG device UUIDs, or PCI bus ids)");
  Environment env = apply_env_options(ctx, args);
  const Snapshot& s = ctx.snapshot();
  Mapping m = ctx.mapping(env, false);
  // "cuda:N" names what cuda:N is in this environment (the mapping `map` shows).
  std::vector<std::string> specs = args.positionals();
  std::vector<CudaOrdinalAnswer> asked_cuda;
  for (std::string& spec : specs)
    if (parse_cuda_ordinal(spec)) {
      asked_cuda.push_back(answer_cuda_ordinal(s, m.view, spec));
      spec = asked_cuda.back().uuid;
    }
  std::vector<std::string> asked = select_devices(s, specs);
  // What CUDA will show, in order: a MIG-mode GPU shows its MIG devices, not the GPU.
  std::vector<std::string> targets;
  for (const std::string& u : asked) {
    const Gpu* g = s.find_uuid(u);
    if (g && g->mig_enabled.value_or(false) && !g->mig_devices.empty())
      for (const MigDevice& md : g->mig_devices) targets.push_back(md.uuid);
    else
      targets.push_back(u);
  }
  require_distinct(targets);

  Json devices = cuda_devices_json(s, targets);
  for (size_t t = 0; t < targets.size(); ++t) {
    std::optional<size_t> pos = pci_index_of(s, targets[t]);  // none for MIG devices
    devices[t]["pci_position"] = pos ? Json(*pos) : Json(nullptr);
  }
  std::vector<std::string> lines;
  for (const std::string& u : asked) {
    std::string line = s.describe(u) + " (" + u + (s.find_uuid(u) ? ", " + s.find_uuid(u)->pci_bus_id : "") + "): ";
    int now = -1;
    for (size_t i = 0; i < m.view.uuids.size(); ++i)
      if (same_uuid_hex(m.view.uuids[i], u)) now = static_cast<int>(i);
    const Gpu* g = s.find_uuid(u);
    if (m.view.error != CudaInitError::kNone) line += std::string("none now (cuInit would fail: ") + cuda_error_name(m.view.error) + ")";
    else if (now >= 0) line += "cuda:" + std::to_string(now) + " in the current environment";
    else if (g && g->mig_enabled.value_or(false)) line += "in MIG mode: CUDA shows its MIG devices, not the GPU";
    else line += "not visible in the current environment";
    lines.push_back(line);
  }
  std::string uuid_form = launch_visibility(s, targets, CvdForm::kUuid).cuda_visible_devices;
  LaunchVisibility by_index = launch_visibility(s, targets, CvdForm::kIndex);
  bool index_possible = by_index.form == CvdForm::kIndex;
  std::string set_uuid = "CUDA_VISIBLE_DEVICES=" + uuid_form;
  // docker --gpus injects the set; inside, the runtime numbers them from 0 in PCI order, so a
  // second GPU keeps its place only by naming them again (host UUIDs stay valid inside).
  std::string docker = "docker run --gpus '\"device=" + uuid_form + "\"'" +
                       (targets.size() > 1 ? " -e CUDA_VISIBLE_DEVICES=" + uuid_form : "");
  if (ctx.json()) {
    Json j = document(s);
    Json cuda = Json::array();
    for (const CudaOrdinalAnswer& a : asked_cuda)
      cuda.push_back({{"spec", a.spec}, {"cuda_ordinal", a.ordinal}, {"uuid", a.uuid},
                      {"nvml_index", a.nvml_index >= 0 ? Json(a.nvml_index) : Json(nullptr)}, {"text", a.sentence}});
    j["asked_cuda"] = cuda;
    j["devices"] = devices;
    j["uuid_form"] = {{"CUDA_VISIBLE_DEVICES", uuid_form}};
    j["index_form"] = index_possible ? Json({{"CUDA_DEVICE_ORDER", by_index.cuda_device_order},
                                            {"CUDA_VISIBLE_DEVICES", by_index.cuda_visible_devices}})
                                     : Json(nullptr);
    j["docker_run"] = docker;
    j["cuda"] = mapping_json(s, m);
    std::cout << dump(j);
    return kExitOk;
  }
  for (const CudaOrdinalAnswer& a : asked_cuda) {
    std::string line = a.sentence;
    line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
    std::cout << fit_line(line + ".") << "\n";
  }
  std::cout << "To get exactly these GPUs as cuda:0.." << targets.size() - 1 << ", in this order:\n\n"
            << "  export " << set_uuid << "\n";
  if (index_possible)
    std::cout << "\nor, by index (indices count in PCI order, which is nvidia-smi's only with this order set):\n\n"
              << "  export " << by_index.assignments() << "\n";
  else if (s.any_mig())
    std::cout << "\n(no index form: MIG devices have no index, and on a host with MIG enabled gpumap does not\n"
                 " predict CUDA's indices; drivers before R570 give a process only the first MIG device listed)\n";
  else
    std::cout << "\n(no index form: " << by_index.note << ")\n";
  std::cout << "\nor, for a container (the runtime renumbers the GPUs it injects from 0, in PCI order):\n\n"
            << "  " << docker << " IMAGE ...\n";
  std::cout << "\nThe UUID form survives reboots, driver updates and containers; indices may not.\n\nNow:\n";
  for (const std::string& l : lines) std::cout << "  " << l << "\n";
  return kExitOk;
}

}  // namespace

Command which_command() {
  return {"which", "what to set to get exactly these physical GPUs, in this order",
          "gpumap which GPU... [--json] [--env NAME=VALUE]... [--unset NAME]...",
          "GPU is an nvidia-smi index, a UUID or a unique prefix of one (MIG device UUIDs too), a PCI\n"
          "bus id in any form (3b:00.0, 0000:3B:00.0, 00000000:3B:00.0), or cuda:N: the GPU that cuda:N\n"
          "is in this environment (said first: `gpumap which cuda:4`).  Prints the CUDA_VISIBLE_DEVICES\n"
          "value that makes them cuda:0, cuda:1, ... in the order given: by UUID (recommended), by index\n"
          "with CUDA_DEVICE_ORDER=PCI_BUS_ID, and the `docker run --gpus` form.  Also says which cuda:N\n"
          "each one is in the current environment, or that it is not visible.  A bad or ambiguous GPU\n"
          "exits 2 and lists the GPUs.",
          env_options(), true, run};
}

}  // namespace gpumap
