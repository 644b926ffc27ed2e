#include "output/job_report.h"

#include "model/text.h"
#include "output/render.h"

namespace gpumap {

Json job_report_json(const JobReport& r) {
  Json j;
  j["job_id"] = r.job_id;
  j["nodes"] = r.nodes;
  j["allocation_known"] = r.allocation_known;
  Json procs = Json::array();
  for (const JobProcess& p : r.processes)
    procs.push_back({{"node", p.node}, {"rank", json_or_null(p.rank)}, {"pid", p.pid}, {"nvml_index", p.nvml_index},
                     {"uuid", p.uuid}, {"cuda_ordinal", json_or_null(p.cuda_ordinal)},
                     {"used_memory_mib", json_or_null(p.used_memory_mib)}, {"command", json_or_null(p.command)}});
  j["processes"] = procs;
  Json gpus = Json::array();
  for (const JobGpu& g : r.gpus) {
    Json o = {{"node", g.node}};
    o.update(gpu_ref_json(g.nvml_index, g.uuid, g.pci_bus_id, g.minor_number));
    o["allocated"] = g.allocated;
    gpus.push_back(o);
  }
  j["gpus"] = gpus;
  j["other_processes"] = r.other_processes;
  j["node_errors"] = r.node_errors;
  j["missing_nodes"] = r.missing_nodes;
  j["findings"] = findings_json(r.findings);
  return j;
}

std::string render_job_report(const JobReport& r, const std::map<std::string, std::string>& missing_why,
                              const TermStyle& st) {
  std::vector<std::vector<std::string>> rows;
  for (const JobProcess& p : r.processes)
    rows.push_back({p.node, na(p.rank), std::to_string(p.pid), std::to_string(p.nvml_index), p.uuid,
                    p.cuda_ordinal ? "cuda:" + std::to_string(*p.cuda_ordinal) : "-",
                    p.used_memory_mib ? std::to_string(*p.used_memory_mib) + " MiB" : "N/A", na(p.command)});
  std::string t = "job " + r.job_id + ": " + std::to_string(r.nodes.size()) + " node(s), " +
                  std::to_string(r.processes.size()) + " GPU process(es)" +
                  (r.allocation_known ? "" : "; the job's GPU allocation is unknown") + "\n\n";
  if (!rows.empty())
    t += render_table({"NODE", "RANK", "PID", "NVIDIA-SMI", "UUID", "CUDA", "MEMORY", "COMMAND"}, rows, st);
  for (const std::string& e : r.node_errors) t += printable_lines("node error: " + e + "\n");  // srun's output
  for (const std::string& n : r.missing_nodes) {
    auto why = missing_why.find(n);
    t += printable_lines("no report from node " + n + ": " + (why == missing_why.end() ? "it did not answer" : why->second) +
                         "; the report covers the other nodes\n");
  }
  return t + render_findings(r.findings, st);
}

std::string render_job(const JobReport& r, const std::map<std::string, std::string>& missing_why, bool json) {
  return json ? dump(job_report_json(r)) : render_job_report(r, missing_why);
}

}  // namespace gpumap
