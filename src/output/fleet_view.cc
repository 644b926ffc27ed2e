#include "output/fleet_view.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "findings/severity.h"
#include "formats/json.h"
#include "model/text.h"

namespace gpumap {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// A value from outside (a label), made safe for a terminal; "?" when the exporter did not send it.
std::string shown(const std::optional<std::string>& v) { return v ? printable(*v) : "?"; }

std::string age_text(const std::optional<double>& s) {
  if (!s) return "never read";
  if (*s < 120) return fmt("%.0f s ago", *s);
  if (*s < 7200) return fmt("%.0f min ago", *s / 60);
  return fmt("%.1f h ago", *s / 3600);
}

std::string plural(long long n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

std::string gpu_line(const FleetGpu& g, bool counted) {
  std::string s = "  GPU " + (g.nvml_index ? std::to_string(*g.nvml_index) : std::string("?")) + "  " + shown(g.name) + "  " +
                  printable(g.uuid) + "\n      memory ";
  s += g.memory_used_bytes ? fmt("%.0f", *g.memory_used_bytes / 1048576.0) : "?";
  s += " / ";
  s += g.memory_total_bytes ? fmt("%.0f MiB", *g.memory_total_bytes / 1048576.0) : "? MiB";
  s += ", utilisation " + (g.utilization_ratio ? fmt("%.0f %%", *g.utilization_ratio * 100) : std::string("?"));
  s += ", " + (g.temperature_celsius ? fmt("%.0f C", *g.temperature_celsius) : std::string("? C"));
  if (counted) s += ", " + (g.process_count_known ? plural(g.process_count, "process", "processes") : std::string("? processes"));
  return s + "\n";
}

std::string where_text(const FleetProcess& p) {
  std::string s;
  if (!p.slurm_job_id.empty()) {
    s += "  job " + printable(p.slurm_job_id);
    if (!p.rank.empty()) s += " rank " + printable(p.rank);
    if (!p.local_rank.empty()) s += " local " + printable(p.local_rank);
  }
  if (!p.pod.empty()) s += "  pod " + printable(p.ns.empty() ? p.pod : p.ns + "/" + p.pod);
  return s;
}

std::string process_line(const FleetProcess& p) {
  std::string s = "      pid " + (p.pid ? std::to_string(*p.pid) : std::string("?")) + "  " +
                  (p.cuda_ordinal ? "cuda:" + std::to_string(*p.cuda_ordinal) : std::string(p.sees_no_gpu ? "none" : "cuda:?")) +
                  "  " + shown(p.user) +
                  where_text(p) + "  " + shown(p.command);
  if (!p.findings.empty()) {
    s += "  [";
    for (size_t i = 0; i < p.findings.size(); ++i) s += (i ? " " : "") + printable(p.findings[i]);
    s += "]";
  }
  return s + "\n";
}

std::string node_state(const FleetNode& n) {
  if (!n.up) {
    std::string why = n.down_reason == "no_gpumap_series"
                          ? "DOWN (scraped, but it exports none of gpumap's series: is it `gpumap serve`?)"
                      : n.down_reason == "not_in_answer"
                          ? "MISSING (read within the hour, not in this partial answer: its store or shard did not answer)"
                          : "DOWN (the last scrape failed)";
    return why + (n.last_read_age_s ? ", last read " + age_text(n.last_read_age_s)
                                    : ", never read (none in the last " + std::to_string(kFleetLongLookbackDays) + " days)");
  }
  std::string s = "up, last read " + age_text(n.last_read_age_s);
  if (n.exporter_up && !*n.exporter_up) s += ", its driver read FAILED";
  if (n.exporter_stale && *n.exporter_stale) s += ", STALE (an older read)";
  return s;
}

Json opt_num(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
Json opt_pid(const std::optional<long long>& v) { return v ? Json(*v) : Json(nullptr); }
Json opt_int(const std::optional<int>& v) { return v ? Json(*v) : Json(nullptr); }
Json opt_str(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }
Json or_null(const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); }

}  // namespace

std::string fleet_text(const FleetAnswer& a, const TermStyle& st) {
  size_t down = 0, gpus = 0;
  long long procs = 0, listed = 0;
  bool procs_known = true;
  for (const FleetNode& n : a.nodes) {
    down += !n.up;
    gpus += n.gpus.size();
    for (const FleetGpu& g : n.gpus) {
      procs += g.process_count;
      procs_known &= g.process_count_known;
      listed += static_cast<long long>(g.processes.size());
    }
  }
  const bool all = a.listed == FleetProcessList::kAll;
  std::string s = "Prometheus " + printable(a.prometheus) + ": " + std::to_string(a.nodes.size()) + " node" +
                  (a.nodes.size() == 1 ? "" : "s") + (down ? " (" + std::to_string(down) + " down)" : "") + ", " +
                  std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + ", " +
                  (procs_known ? plural(procs, "GPU process", "GPU processes") : std::string("? GPU processes")) +
                  ", " + std::to_string(a.jobs.size()) + " Slurm job" + (a.jobs.size() == 1 ? "" : "s") + "\n";
  if (a.partial) {
    s += colored("PARTIAL: the answer lacks part of the fleet (the engine's warnings below; partial: ", "error", st);
    for (size_t i = 0; i < a.partial_queries.size(); ++i) s += (i ? ", " : "") + a.partial_queries[i];
    size_t missing = 0;
    for (const FleetNode& n : a.nodes) missing += n.down_reason == "not_in_answer";
    s += "); " + plural(static_cast<long long>(missing), "node read within the hour is", "nodes read within the hour are") +
         " MISSING from it, and a node its store never held cannot be named\n";
  }
  if (!all) {
    const bool whole = a.filter.nodes.empty() && !a.filter.narrows_content();
    s += "Listed: the " + plural(listed, "process", "processes") + " with a warning or error finding, and each GPU's count (" +
         (procs > kFleetListLimit ? "over " + std::to_string(kFleetListLimit) + " GPU processes; " : "") +
         "--processes all lists every one" + (whole ? "; --node, --job or --user narrows" : "") + ")\n";
  }
  if (a.nodes.empty())
    s += a.filter.nodes.empty() && !a.filter.narrows_content()
             ? "No node exports gpumap's series to this Prometheus (is `gpumap serve` scraped? docs/fleet.md)\n"
             : "Nothing matches the filters.\n";
  for (const FleetNode& n : a.nodes) {
    s += "\n" + printable(n.node) + " (" + printable(n.instance) + (n.job.empty() ? "" : ", job " + printable(n.job)) + "): ";
    s += n.up ? node_state(n) : colored(node_state(n), "error", st);
    s += "\n";
    for (const FleetGpu& g : n.gpus) {
      s += gpu_line(g, !all);
      for (const FleetProcess& p : g.processes) s += process_line(p);
    }
    if (!n.host_findings.empty()) {
      s += "  node findings:";
      for (const std::string& f : n.host_findings) s += " " + printable(f);
      s += "\n";
    }
  }
  if (!a.jobs.empty()) s += "\nSlurm jobs:\n";
  for (const FleetJob& j : a.jobs) {
    s += "  job " + printable(j.slurm_job_id) + ": " +
         (all                     ? plural(static_cast<long long>(j.ranks.size()), "rank", "ranks")
          : j.gpu_processes_known ? plural(j.gpu_processes, "GPU process", "GPU processes")
                                  : std::string("? GPU processes")) +
         " on " + std::to_string(j.nodes.size()) + " node" + (j.nodes.size() == 1 ? "" : "s") + " (";
    for (size_t i = 0; i < j.nodes.size(); ++i) s += (i ? ", " : "") + printable(j.nodes[i]);
    s += ")";
    if (!j.finding_ids.empty()) {
      s += "  findings:";
      for (const std::string& f : j.finding_ids) s += " " + printable(f);
    }
    if (!all) s += j.ranks.empty() ? "  (no rank with a finding)" : "  (the ranks with a finding:)";
    s += "\n";
    for (const FleetRank& r : j.ranks) {
      s += "    rank " + (r.rank.empty() ? std::string("?") : printable(r.rank)) + "  " + printable(r.node) + "  pid " +
           (r.pid ? std::to_string(*r.pid) : std::string("?")) + " ";
      for (const FleetRankGpu& g : r.gpus)
        s += " " + (g.cuda_ordinal ? "cuda:" + std::to_string(*g.cuda_ordinal) : std::string(g.sees_no_gpu ? "none" : "cuda:?")) +
             " = GPU " +
             (g.nvml_index ? std::to_string(*g.nvml_index) : std::string("?")) + " " + printable(g.uuid);
      s += "\n";
    }
  }
  if (!a.causes.empty()) s += "\nFindings by cause:\n";
  for (const FleetCause& c : a.causes) {
    std::set<std::string> nodes;
    for (const FleetFindingPlace& p : c.places) nodes.insert(p.node);
    s += "  " + colored(std::string("[") + severity_name(c.severity) + "]", severity_name(c.severity), st) + " " + printable(c.id) +
         ": " + std::to_string(c.places.size()) + " place" + (c.places.size() == 1 ? "" : "s") + " on " + std::to_string(nodes.size()) +
         " node" + (nodes.size() == 1 ? "" : "s") + "\n";
    for (const FleetFindingPlace& p : c.places) {
      s += "      " + printable(p.node);
      if (p.pid) s += " pid " + std::to_string(*p.pid);
      if (!p.uuid.empty()) s += " " + printable(p.uuid);
      if (!p.slurm_job_id.empty()) s += " (job " + printable(p.slurm_job_id) + ")";
      s += "\n";
    }
  }
  if (!a.hidden_info.empty()) {
    long long n = 0;
    std::string ids;
    for (const auto& [id, count] : a.hidden_info) {
      n += count;
      ids += (ids.empty() ? "" : ", ") + printable(id) + " " + std::to_string(count);
    }
    s += "\n" + std::to_string(n) + " info finding" + (n == 1 ? "" : "s") + " not listed (" + ids + "): -v lists them\n";
  }
  for (const std::string& w : a.warnings) s += "warning: " + printable(w) + "\n";
  return s;
}

std::string fleet_json(const FleetAnswer& a) {
  Json nodes = Json::array();
  for (const FleetNode& n : a.nodes) {
    Json gpus = Json::array();
    for (const FleetGpu& g : n.gpus) {
      Json procs = Json::array();
      for (const FleetProcess& p : g.processes)
        procs.push_back({{"pid", opt_pid(p.pid)},
                         {"type", or_null(p.type)},
                         {"user", opt_str(p.user)},
                         {"command", opt_str(p.command)},
                         {"cuda_ordinal", opt_int(p.cuda_ordinal)},
                         {"state", or_null(p.state)},
                         {"slurm_job_id", or_null(p.slurm_job_id)},
                         {"rank", or_null(p.rank)},
                         {"local_rank", or_null(p.local_rank)},
                         {"pod", or_null(p.pod)},
                         {"namespace", or_null(p.ns)},
                         {"container", or_null(p.container)},
                         {"findings", p.findings}});
      gpus.push_back({{"nvml_index", opt_int(g.nvml_index)},
                      {"uuid", g.uuid},
                      {"name", opt_str(g.name)},
                      {"memory_used_bytes", opt_num(g.memory_used_bytes)},
                      {"memory_total_bytes", opt_num(g.memory_total_bytes)},
                      {"utilization_ratio", opt_num(g.utilization_ratio)},
                      {"temperature_celsius", opt_num(g.temperature_celsius)},
                      {"process_count", g.process_count_known ? Json(g.process_count) : Json(nullptr)},
                      {"processes", procs}});
    }
    nodes.push_back({{"node", n.node},
                     {"instance", n.instance},
                     {"job", n.job},
                     {"up", n.up},
                     {"down_reason", or_null(n.down_reason)},
                     {"last_read_age_seconds", opt_num(n.last_read_age_s)},
                     {"exporter_up", n.exporter_up ? Json(*n.exporter_up) : Json(nullptr)},
                     {"exporter_stale", n.exporter_stale ? Json(*n.exporter_stale) : Json(nullptr)},
                     {"gpus", gpus},
                     {"findings", n.host_findings}});
  }
  Json jobs = Json::array();
  for (const FleetJob& j : a.jobs) {
    Json ranks = Json::array();
    for (const FleetRank& r : j.ranks) {
      Json gs = Json::array();
      for (const FleetRankGpu& g : r.gpus)
        gs.push_back({{"nvml_index", opt_int(g.nvml_index)}, {"uuid", g.uuid}, {"cuda_ordinal", opt_int(g.cuda_ordinal)}});
      ranks.push_back({{"node", r.node},
                       {"instance", r.instance},
                       {"pid", opt_pid(r.pid)},
                       {"rank", or_null(r.rank)},
                       {"local_rank", or_null(r.local_rank)},
                       {"user", opt_str(r.user)},
                       {"gpus", gs}});
    }
    jobs.push_back({{"slurm_job_id", j.slurm_job_id},
                    {"nodes", j.nodes},
                    {"gpu_processes", j.gpu_processes_known ? Json(j.gpu_processes) : Json(nullptr)},
                    {"ranks", ranks},
                    {"findings", j.finding_ids}});
  }
  Json causes = Json::array();
  for (const FleetCause& c : a.causes) {
    Json places = Json::array();
    for (const FleetFindingPlace& p : c.places)
      places.push_back({{"node", p.node},
                        {"instance", p.instance},
                        {"pid", opt_pid(p.pid)},
                        {"uuid", or_null(p.uuid)},
                        {"slurm_job_id", or_null(p.slurm_job_id)}});
    causes.push_back({{"id", c.id}, {"severity", severity_name(c.severity)}, {"places", places}});
  }
  Json j = {{"simulated", false},
            {"source", "Prometheus " + a.prometheus},
            {"prometheus", a.prometheus},
            {"evaluated_at", a.evaluated_at},
            {"filter",
             {{"node", a.filter.nodes}, {"job", a.filter.jobs}, {"user", a.filter.users}, {"gpu_model", a.filter.gpu_models}}},
            {"processes_listed", a.listed == FleetProcessList::kAll ? "all" : "with-findings"},
            {"nodes", nodes},
            {"jobs", jobs},
            {"findings_by_cause", causes},
            {"info_findings_not_listed", a.filter.info ? Json(nullptr) : Json(a.hidden_info)},
            {"warnings", a.warnings},
            {"partial", a.partial},
            {"partial_queries", a.partial_queries}};
  return dump(j);
}

}  // namespace gpumap
