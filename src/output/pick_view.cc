#include "output/pick_view.h"

#include "model/error.h"
#include "model/text.h"
#include "output/json_view.h"
#include "output/render.h"

namespace gpumap {

std::string describe_choice(const Snapshot& s, const std::vector<std::string>& uuids, const std::string& indent) {
  std::string out;
  for (size_t i = 0; i < uuids.size(); ++i) {
    Snapshot::DeviceRef d = s.find_device(uuids[i]);
    const Gpu* g = d.gpu;
    std::string name = d.mig ? (d.mig->name.empty() ? g->name + " MIG" : d.mig->name) : g ? g->name : "";
    out += indent + "cuda:" + std::to_string(i) + " -> GPU " + (g ? std::to_string(g->nvml_index) : "?") + "  " +
           uuids[i] + (g ? "  " + g->pci_bus_id + "  " + name : "") + "\n";
  }
  return out;
}

Json pick_json(const PickAnswer& a) {
  Json j = launch_json(*a.snapshot, a.uuids, a.visibility.variables());
  j["notes"] = a.notes;
  j["passed_over"] = passed_over_json(*a.snapshot, a.passed_over);
  j["reserved"] = false;
  return j;
}

std::string pick_exports(const PickAnswer& a) {
  std::string out;
  for (const auto& [k, v] : a.visibility.variables()) out += "export " + k + "=" + v + "\n";
  return out;
}

std::string pick_text(const PickAnswer& a, const TermStyle& st) {
  // UUIDs and GPU names come from the driver: printed printable.
  std::string prose = "Picked (not reserved: `gpumap run` holds a lease while the job runs):\n" +
                      describe_choice(*a.snapshot, a.uuids, "  ");
  for (const std::string& n : a.notes) prose += "  why: " + n + "\n";
  for (const Rejection& x : a.passed_over)
    prose += "  passed over GPU " + std::to_string(x.nvml_index) + ": " + join(x.reasons, ", ") + "\n";
  return fit_lines(prose, st) + "\n" + printable_lines(pick_exports(a));
}

std::string render_pick(const PickAnswer& a, PickFormat format, const TermStyle& st) {
  switch (format) {
    case PickFormat::kJson: return dump(pick_json(a));
    case PickFormat::kEnv: return printable_lines(pick_exports(a));
    case PickFormat::kUuid: return printable_lines(join(a.uuids, ",") + "\n");
    case PickFormat::kIndex:
      if (a.by_index.form != CvdForm::kIndex)
        throw Error(kExitUsage, "pick: no index form on this host (" + a.by_index.note + ")", "use --format uuid or env");
      return printable_lines(a.by_index.assignments() + "\n");
    case PickFormat::kText: break;
  }
  return pick_text(a, st);
}

}  // namespace gpumap
