#include "output/map_view.h"

#include "model/text.h"
#include "output/json_view.h"
#include "output/render.h"

namespace gpumap {

std::string cuda_assignments(const Snapshot& s, const Mapping& m) {
  if (m.view.error != CudaInitError::kNone) return std::string(" CUDA would fail (") + cuda_error_name(m.view.error) + ")";
  if (m.view.uuids.empty()) return " no GPU";
  std::string out;
  for (size_t i = 0; i < m.view.uuids.size(); ++i) {
    int idx = s.nvml_index_of(m.view.uuids[i]);
    out += std::string(i ? "," : "") + " cuda:" + std::to_string(i) + " = nvidia-smi " +
           (idx >= 0 ? std::to_string(idx) : "?") + " " + m.view.uuids[i];
  }
  return out;
}

Json map_json(const Snapshot& s, const MapAnswer& a) {
  Json j = snapshot_json(s);
  j["cuda"] = mapping_json(s, a.mapping, &a.where);
  if (!a.asked.empty()) j["asked_cuda"] = asked_cuda_json(a.asked);
  Json hidden = Json::array();
  for (const HiddenGpu& g : a.not_visible) hidden.push_back(g.nvml_index);
  j["not_visible"] = hidden;
  j["torch"] = torch_view_json(s, a.env, a.mapping);
  j["environment"] = environment_json(a.env);
  j["findings"] = findings_json(a.findings);
  if (a.check)
    j["check"] = {{"agree", a.check->agree},
                  {"predicted", mapping_json(s, a.mapping)},
                  {"driver", mapping_json(s, a.check->driver)},
                  {"refreshed_cache", a.check->refreshed_cache}};
  return j;
}

namespace {

std::string cuda_table(const Snapshot& s, const MapAnswer& a, const TermStyle& st) {
  const Mapping& m = a.mapping;
  std::string out;
  if (m.view.error != CudaInitError::kNone) {
    if (m.view.error == CudaInitError::kDriverCrash)
      out += "CUDA would CRASH as it starts: cuInit does not return (DRIVER_CRASH)\n";
    else
      out += std::string("CUDA would FAIL to initialise: ") + cuda_error_name(m.view.error) + " (" +
             std::to_string(cuda_error_code(m.view.error)) + ")\n";
    return out + fit_line("  because " + m.view.error_reason, st);
  }
  // HOST (inside a container) or SLURM ID (a step under a device cgroup), beside NVIDIA-SMI.
  const char* outer_column = nullptr;
  for (const std::string& u : m.view.uuids)
    if (auto o = outer_number(s, a.where, u)) outer_column = o->column;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < m.view.uuids.size(); ++i) {
    const std::string& u = m.view.uuids[i];
    const Gpu* g = s.find_device(u).gpu;
    rows.push_back({"cuda:" + std::to_string(i), g ? std::to_string(g->nvml_index) : "?", u, g ? g->pci_bus_id : "?",
                    device_name(s, u), memory_cell(s, u)});
    if (outer_column) {
      auto o = outer_number(s, a.where, u);
      rows.back().insert(rows.back().begin() + 2, o ? std::to_string(o->value) : "?");
    }
  }
  std::vector<std::string> heads = {"CUDA", "NVIDIA-SMI", "UUID", "PCI BUS ID", "NAME", "MEMORY USED"};
  if (outer_column) heads.insert(heads.begin() + 2, outer_column);
  return render_table(heads, rows, st, {"NAME"});
}

std::string variables_line(const Environment& env) {
  std::string vars = "Variables:";
  bool any = false;
  for (const std::string& n : relevant_variables())
    if (auto v = env.get(n)) {
      vars += (any ? "  " : " ") + n + "=" + (v->empty() ? "''" : *v);
      any = true;
    }
  if (!any) vars += " none set (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset)";
  return vars;
}

std::string check_text(const Snapshot& s, const MapCheck& c, const TermStyle& st) {
  std::string said = "Check against the driver: " + std::string(c.agree ? "AGREE" : "DISAGREE") + " (driver said ";
  if (c.driver.view.error != CudaInitError::kNone) said += cuda_error_name(c.driver.view.error);
  else
    for (size_t i = 0; i < c.driver.view.uuids.size(); ++i)
      said += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + "=" + s.describe(c.driver.view.uuids[i]);
  std::string out = "\n" + printable(said + ")") + "\n";
  if (c.refreshed_cache)
    out += fit_line("The CUDA order cached earlier this boot was out of date (it disagreed with the driver): "
                    "gpumap asked the driver again and rewrote the cache; the prediction above uses the new "
                    "order.  Other cached orders refresh the same way: gpumap map --check",
                    st);
  return out;
}

}  // namespace

std::string map_text(const Snapshot& s, const MapAnswer& a, const TermStyle& st) {
  std::string out = host_banner(s, st);
  for (const CudaOrdinalAnswer& x : a.asked) out += "\n" + fit_line("In" + x.sentence.substr(2) + ".", st);
  out += (a.asked.empty() ? "" : "\n") + fit_line("CUDA view (" + a.mapping.source + "): " + a.mapping.order_note, st);
  out += "\n" + cuda_table(s, a, st);
  std::vector<std::string> hidden;
  for (const HiddenGpu& g : a.not_visible) hidden.push_back("GPU " + std::to_string(g.nvml_index) + " (" + g.uuid + ")");
  if (!hidden.empty() && a.mapping.view.error == CudaInitError::kNone)
    out += "\n" + fit_line("Not visible to this process: " + join(hidden, ", "), st);
  out += "\n" + fit_line(variables_line(a.env), st) + render_findings(a.findings, st);
  if (a.check) out += check_text(s, *a.check, st);
  return out;
}

std::string map_line(const Snapshot& s, const MapAnswer& a) {
  std::string who;  // "gpumap: rank 1 on node7:", or just "gpumap:" outside Slurm
  if (auto rank = a.env.get("SLURM_PROCID")) who += " rank " + *rank;
  if (auto node = a.env.get("SLURMD_NODENAME")) who += " on " + *node;
  std::string out = "gpumap:" + who + (who.empty() ? "" : ":") + cuda_assignments(s, a.mapping);
  std::vector<std::string> traps;
  for (const Finding& f : a.findings)
    if (f.severity != Severity::kInfo) traps.push_back(f.id);
  out += "; " + std::to_string(traps.size()) + " finding(s)";
  for (size_t i = 0; i < traps.size(); ++i) out += (i ? ", " : ": ") + traps[i];
  if (!traps.empty()) out += " (run gpumap doctor)";
  return printable(out);  // SLURMD_NODENAME and the like come from outside
}

std::string render_map(const Snapshot& s, const MapAnswer& a, MapFormat format, const TermStyle& st) {
  switch (format) {
    case MapFormat::kJson: return dump(map_json(s, a));
    case MapFormat::kLine: return map_line(s, a) + "\n";
    case MapFormat::kText: break;
  }
  return map_text(s, a, st);
}

Json batch_case_json(const Snapshot& s, size_t line, const Environment& env, const Mapping& m) {
  Json j = document(s);
  j["line"] = line;
  j["environment"] = environment_json(env);
  j["cuda"] = mapping_json(s, m);
  j["torch"] = torch_view_json(s, env, m);
  return j;
}

std::string batch_case_line(const Snapshot& s, size_t line, const Mapping& m) {
  return "line " + std::to_string(line) + ":" + cuda_assignments(s, m);
}

void write_map_batch(std::ostream& out, const Snapshot& s, MapBatchAnswer& a, bool json) {
  while (std::optional<MapBatchCase> c = a.next()) {
    if (json) out << dump(batch_case_json(s, c->line, c->env, c->mapping), true);
    else out << batch_case_line(s, c->line, c->mapping) << "\n";
  }
  out.flush();
}

}  // namespace gpumap
