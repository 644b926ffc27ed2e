#include "output/list_view.h"

#include "model/text.h"
#include "output/json_view.h"
#include "output/render.h"

namespace gpumap {

Json list_json(const ListAnswer& a) {
  const Snapshot& s = *a.snapshot;
  Json j = snapshot_json(s);
  for (Json& gj : j["gpus"]) {
    std::string uuid = gj["uuid"].get<std::string>();
    auto l = a.leases.find(uuid);
    gj["lease"] = l == a.leases.end() ? Json(nullptr) : lease_json(l->second);  // a lost GPU has no lease to name
    if (auto o = outer_number(s, a.where, uuid)) gj[o->key] = o->value;
  }
  return j;
}

std::string list_text(const ListAnswer& a, const TermStyle& st) {
  const Snapshot& s = *a.snapshot;
  std::vector<std::vector<std::string>> rows;
  for (const Gpu& g : s.gpus) {
    std::string util = g.utilization_gpu ? std::to_string(*g.utilization_gpu) + "%" : "N/A";
    std::string procs = g.processes ? std::to_string(g.processes->size()) : "?";  // unknown, never "0"
    std::string mig = g.mig_enabled ? (*g.mig_enabled ? "on (" + std::to_string(g.mig_devices.size()) + ")" : "off") : "N/A";
    auto l = a.leases.find(g.uuid);
    // Into a pipe (or --wide) the table cuts nothing: the holder's whole command.
    std::string lease = l == a.leases.end() ? "" : lease_summary(l->second, st.fit ? LeaseWords::kLine : LeaseWords::kWhole);
    rows.push_back({std::to_string(g.nvml_index), g.name, g.uuid, g.pci_bus_id, memory_cell(g), util,
                    na(g.compute_capability), mig, procs, lease.empty() ? "-" : lease});
  }
  std::vector<std::string> heads = {"GPU", "NAME", "UUID", "PCI BUS ID", "MEMORY USED", "UTIL", "CC", "MIG", "PROCS", "LEASE"};
  if (!s.gpus.empty())
    if (auto first = outer_number(s, a.where, s.gpus.front().uuid)) {
      heads.insert(heads.begin() + 1, first->column);
      for (size_t i = 0; i < rows.size(); ++i) {
        auto o = outer_number(s, a.where, s.gpus[i].uuid);
        rows[i].insert(rows[i].begin() + 1, o ? std::to_string(o->value) : "?");
      }
    }
  // On a narrow terminal the model stays readable (it is the point on a box of mixed GPUs): the
  // bus id goes first (the short UUID names the GPU as well), then CC, then the UUID.
  std::string out = host_banner(s, st) + render_table(heads, rows, st,
                                                      TableFit{{"NAME", "LEASE"}, {"PCI BUS ID", "CC", "UUID"}, "NAME", 16});
  for (const Gpu& g : s.gpus)
    for (const GpuNote& n : g.notes) out += fit_line("note: GPU " + std::to_string(g.nvml_index) + ": " + n.text, st);
  return out;
}

std::string list_csv(const ListAnswer& a, const std::vector<std::string>& fields, CsvFormat fmt) {
  return render_gpu_csv(*a.snapshot, GpuQueryExtras{a.cuda_ordinal, a.leases}, fields, fmt);
}

std::string render_list(const ListAnswer& a, bool json) { return json ? dump(list_json(a)) : list_text(a); }

}  // namespace gpumap
