#include "output/which_view.h"

#include <cctype>

#include "model/text.h"
#include "output/json_view.h"
#include "output/render.h"

namespace gpumap {

Json which_json(const WhichAnswer& a) {
  const Snapshot& s = *a.snapshot;
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
  return j;
}

std::string which_text(const WhichAnswer& a, const TermStyle& st) {
  std::string out;
  for (const CudaOrdinalAnswer& c : a.asked_cuda) {
    std::string line = c.sentence;
    line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
    out += fit_line(line + ".", st) + "\n";
  }
  out += fit_line(a.targets.size() == 1 ? std::string("To get exactly this GPU as cuda:0:")
                                        : "To get exactly these GPUs as cuda:0.." + std::to_string(a.targets.size() - 1) +
                                              ", in this order:",
                  st) +
         "\n  export CUDA_VISIBLE_DEVICES=" + printable(a.by_uuid.cuda_visible_devices) + "\n";
  if (a.by_index)
    out += "\n" + fit_line("or, by index (indices count in PCI order, which is nvidia-smi's only with this order set):", st) +
           "\n  export " + printable(a.by_index->assignments()) + "\n";
  else
    out += "\n" + fit_line("(no index form: " + a.no_index_reason + ")", st);
  out += "\n" + fit_line("or, for a container (the runtime renumbers the GPUs it injects from 0, in PCI order):", st) +
         "\n  " + printable(a.docker_run) + " IMAGE ...\n";
  out += "\n" + fit_line("The UUID form survives reboots, driver updates and containers; indices may not.", st) + "\nNow:\n";
  for (const std::string& l : a.now) out += fit_line("  " + l, st);
  return out;
}

std::string render_which(const WhichAnswer& a, bool json) { return json ? dump(which_json(a)) : which_text(a); }

}  // namespace gpumap
