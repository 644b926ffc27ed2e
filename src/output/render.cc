#include "output/render.h"

#include "model/text.h"

namespace gpumap {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "?";
}

Severity worst(const std::vector<Finding>& fs) {
  Severity w = Severity::kInfo;
  for (const Finding& f : fs)
    if (f.severity > w) w = f.severity;
  return w;
}

std::string render_table(const std::vector<std::string>& raw_headers, const std::vector<std::vector<std::string>>& raw_rows) {
  // Cells carry other users' command lines, lease records and driver strings: never let them
  // drive the viewer's terminal.
  std::vector<std::string> headers;
  for (const std::string& h : raw_headers) headers.push_back(printable(h));
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : raw_rows) {
    rows.emplace_back();
    for (const std::string& c : r) rows.back().push_back(printable(c));
  }
  std::vector<size_t> w(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) w[c] = headers[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < w.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      s += cell;
      if (c + 1 < w.size()) s += std::string(w[c] - cell.size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(headers);
  for (const auto& r : rows) out += line(r);
  return out;
}

Json gpu_json(const Gpu& g) {
  Json j;
  j["nvml_index"] = g.nvml_index;
  j["uuid"] = g.uuid;
  j["pci_bus_id"] = g.pci_bus_id;
  j["name"] = g.name;
  j["memory_total_mib"] = json_or_null(g.memory_total_mib);
  j["memory_used_mib"] = json_or_null(g.memory_used_mib);
  j["memory_free_mib"] = json_or_null(g.memory_free_mib);
  j["minor_number"] = json_or_null(g.minor_number);
  j["utilization_gpu"] = json_or_null(g.utilization_gpu);
  j["utilization_memory"] = json_or_null(g.utilization_memory);
  j["compute_capability"] = json_or_null(g.compute_capability);
  j["mig_enabled"] = json_or_null(g.mig_enabled);
  Json mig = Json::array();
  for (const MigDevice& m : g.mig_devices)
    mig.push_back({{"uuid", m.uuid},
                   {"gpu_instance_id", json_or_null(m.gpu_instance_id)},
                   {"compute_instance_id", json_or_null(m.compute_instance_id)},
                   {"memory_total_mib", json_or_null(m.memory_total_mib)}});
  j["mig_devices"] = mig;
  j["process_count"] = g.processes ? Json(g.processes->size()) : Json(nullptr);
  if (g.cpu_affinity) j["cpu_affinity"] = *g.cpu_affinity;
  if (!g.nvlink_peers.empty()) j["nvlink_peers"] = g.nvlink_peers;
  if (g.nvswitch_links) j["nvswitch_links"] = *g.nvswitch_links;
  j["notes"] = g.notes;
  return j;
}

Json snapshot_json(const Snapshot& s) {
  Json j;
  j["simulated"] = s.simulated;
  j["source"] = s.source;
  j["driver_version"] = json_or_null(s.driver_version);
  j["cuda_driver_version"] = json_or_null(s.cuda_driver_version);
  j["nvml_symbols"] = s.bindings;  // which versioned NVML symbol bound for each call
  Json gpus = Json::array();
  for (const Gpu& g : s.gpus) gpus.push_back(gpu_json(g));
  j["gpus"] = gpus;
  return j;
}

Json findings_json(const std::vector<Finding>& fs) {
  Json a = Json::array();
  for (const Finding& f : fs)
    a.push_back({{"id", f.id}, {"severity", severity_name(f.severity)}, {"message", f.message}, {"fix", f.fix}});
  return a;
}

std::string render_findings(const std::vector<Finding>& fs) {
  if (fs.empty()) return "";
  std::string out = "\nFindings:\n";
  for (const Finding& f : fs) {
    out += "  [" + std::string(severity_name(f.severity)) + "] " + f.id + ": " + printable(f.message) + "\n";
    if (!f.fix.empty()) out += "      fix: " + printable(f.fix) + "\n";
  }
  return out;
}

std::string memory_cell(const Gpu& g) {
  if (!g.memory_total_mib) return "N/A";
  return na(g.memory_used_mib) + " / " + std::to_string(*g.memory_total_mib) + " MiB";
}

std::string host_banner(const Snapshot& s) {
  std::string b = s.simulated ? "SIMULATED host (" + s.source.substr(std::string("simulated host ").size()) + ")"
                              : "this host";
  b += ", driver " + s.driver_version.value_or("N/A");
  if (s.cuda_driver_version)
    b += ", CUDA " + std::to_string(*s.cuda_driver_version / 1000) + "." +
         std::to_string(*s.cuda_driver_version % 1000 / 10);
  b += ", " + std::to_string(s.gpus.size()) + " GPU" + (s.gpus.size() == 1 ? "" : "s");
  return printable(b) + "\n";
}

std::string dump(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

std::string dump_line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace gpumap
