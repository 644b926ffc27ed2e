#include "output/health_view.h"

#include <cmath>

#include "findings/severity.h"
#include "formats/json.h"
#include "model/text.h"
#include "output/render.h"

namespace gpumap {
namespace {

std::string age_words(double s) {
  long v = std::lround(s);
  if (v < 120) return std::to_string(v) + " s ago";
  if (v < 7200) return std::to_string(v / 60) + " min ago";
  if (v < 172800) return std::to_string(v / 3600) + " h ago";
  return std::to_string(v / 86400) + " days ago";
}

template <class T>
std::string num_or_na(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "N/A";
}

Json process_json(const FaultProcess& p) {
  const ProcessRow& r = p.row;
  Json pod = nullptr, ns = nullptr;
  if (r.pod && !r.pod->name.empty()) pod = r.pod->name, ns = r.pod->ns;
  return {{"pid", p.pid},
          {"state", process_state_name(r.state)},
          {"named_by_kernel", p.named_by_kernel},
          {"kernel_name", json_or_null(p.kernel_name)},
          {"user", json_or_null(r.user)},
          {"command", json_or_null(r.command)},
          {"cuda_ordinal", json_or_null(r.cuda_ordinal)},
          {"slurm_job_id", json_or_null(r.slurm_job_id)},
          {"slurm_procid", json_or_null(r.slurm_procid)},
          {"global_rank", json_or_null(r.global_rank)},
          {"local_rank", json_or_null(r.rank)},
          {"job", r.job.empty() ? Json(nullptr) : Json(r.job)},
          {"pod", pod},
          {"namespace", ns}};
}

Json gpu_json(const HealthGpu& g) {
  const GpuFaultCounters& c = g.counters;
  Json reasons = nullptr;
  if (c.clock_event_reasons) reasons = clock_event_names(*c.clock_event_reasons);
  return {{"nvml_index", g.nvml_index},
          {"uuid", g.uuid},
          {"pci_bus_id", g.pci_bus_id},
          {"name", g.name},
          {"lost", c.lost},
          {"ecc_corrected_volatile", json_or_null(c.ecc_corrected_volatile)},
          {"ecc_uncorrected_volatile", json_or_null(c.ecc_uncorrected_volatile)},
          {"ecc_corrected_aggregate", json_or_null(c.ecc_corrected_aggregate)},
          {"ecc_uncorrected_aggregate", json_or_null(c.ecc_uncorrected_aggregate)},
          {"retired_pages_sbe", json_or_null(c.retired_pages_sbe)},
          {"retired_pages_dbe", json_or_null(c.retired_pages_dbe)},
          {"retired_pages_pending", json_or_null(c.retired_pages_pending)},
          {"remapped_rows_correctable", json_or_null(c.remapped_rows_correctable)},
          {"remapped_rows_uncorrectable", json_or_null(c.remapped_rows_uncorrectable)},
          {"remapped_rows_pending", json_or_null(c.remapped_rows_pending)},
          {"remapped_rows_failed", json_or_null(c.remapped_rows_failed)},
          {"clock_event_reasons", reasons},
          {"pcie_replay_count", json_or_null(c.pcie_replay_count)},
          {"xids_since_boot", g.xids_since_boot},
          {"xids_in_window", g.xids_in_window},
          {"notes", c.notes}};
}

Json fault_json(const HealthFault& f) {
  Json procs = Json::array();
  for (const FaultProcess& p : f.processes) procs.push_back(process_json(p));
  return {{"kind", f.kind},
          {"severity", severity_name(f.severity)},
          {"nvml_index", json_or_null(f.nvml_index)},
          {"uuid", f.uuid.empty() ? Json(nullptr) : Json(f.uuid)},
          {"pci", f.pci},
          {"xid", f.xid ? Json(f.xid->xid) : Json(nullptr)},
          {"cause", f.xid ? Json(xid_cause_name(f.xid->cause)) : Json(nullptr)},
          {"meaning", f.xid ? Json(f.xid->meaning) : Json(nullptr)},
          {"age_s", json_or_null(f.age_s)},
          {"kernel_pid", f.line ? json_or_null(f.line->pid) : Json(nullptr)},
          {"kernel_name", f.line ? json_or_null(f.line->process_name) : Json(nullptr)},
          {"kernel_line", f.line ? Json(f.line->message) : Json(nullptr)},
          {"message", f.message},
          {"action", f.action},
          {"processes", procs}};
}

}  // namespace

std::string fault_process_words(const FaultProcess& p) {
  const ProcessRow& r = p.row;
  std::string t = "pid " + std::to_string(p.pid);
  if (r.state != ProcessState::kRunning) {
    t += std::string(" (") + process_state_name(r.state);
    if (p.kernel_name) t += "; the kernel named it " + *p.kernel_name;
    t += ")";
    if (!r.user && !r.slurm_job_id && !r.cuda_ordinal) return t;
  } else if (r.command) {
    std::string cmd = *r.command;
    if (cmd.size() > 40) cmd = cmd.substr(0, 40) + "...";
    t += " " + cmd;
  } else if (p.kernel_name) {
    t += " " + *p.kernel_name;
  }
  if (r.user) t += " (user " + *r.user + ")";
  t += r.cuda_ordinal ? ", its cuda:" + std::to_string(*r.cuda_ordinal) : "";
  if (r.slurm_job_id) t += ", Slurm job " + *r.slurm_job_id + (r.slurm_procid ? " rank " + *r.slurm_procid : "");
  else if (r.global_rank) t += ", rank " + *r.global_rank;
  if (r.rank && !r.rank_variable.empty()) t += ", " + r.rank_variable + "=" + std::to_string(*r.rank);
  if (!r.job.empty() && !r.slurm_job_id) t += ", " + r.job;
  if (r.pod && !r.pod->name.empty()) t += ", pod " + r.pod->ns + "/" + r.pod->name;
  return t;
}

std::string health_json(const HealthAnswer& a, bool one_line) {
  Json j;
  j["simulated"] = a.simulated;
  j["source"] = a.source;
  j["host"] = a.host;
  j["kernel_log"] = {{"source", a.kernel_log.source},
                     {"readable", a.kernel_log.readable},
                     {"problem", a.kernel_log.problem.empty() ? Json(nullptr) : Json(a.kernel_log.problem)},
                     {"lines", a.kernel_log.lines},
                     {"xids", a.kernel_log.xids}};
  j["uptime_s"] = json_or_null(a.uptime_s);
  j["since_s"] = json_or_null(a.since_s);
  j["worst"] = a.faults.empty() ? Json(nullptr) : Json(severity_name(a.worst));
  Json gpus = Json::array(), faults = Json::array();
  for (const HealthGpu& g : a.gpus) gpus.push_back(gpu_json(g));
  for (const HealthFault& f : a.faults) faults.push_back(fault_json(f));
  j["gpus"] = gpus;
  j["faults"] = faults;
  return dump(j, one_line);
}

std::string health_text(const Snapshot& s, const HealthAnswer& a, const TermStyle& st) {
  std::string t = host_banner(s, st);
  if (a.kernel_log.readable)
    t += fit_line("kernel log: " + a.kernel_log.source + " (" + std::to_string(a.kernel_log.xids) + " Xid lines since boot)", st);
  else
    t += fit_line("kernel log: not readable: " + a.kernel_log.problem +
                      "; Xids are not shown, only NVML's counters (which name no process)", st);
  for (const HealthGpu& g : a.gpus) {
    const GpuFaultCounters& c = g.counters;
    std::string line = "GPU " + std::to_string(g.nvml_index) + " " + g.uuid + " (" + g.name + ")";
    if (c.lost) line += ": LOST";
    line += ": ECC uncorrectable " + num_or_na(c.ecc_uncorrected_volatile) + " volatile, " +
            num_or_na(c.ecc_uncorrected_aggregate) + " aggregate; corrected " + num_or_na(c.ecc_corrected_volatile);
    if (c.remapped_rows_correctable || c.remapped_rows_uncorrectable)
      line += "; remapped rows " + num_or_na(c.remapped_rows_correctable) + " correctable, " +
              num_or_na(c.remapped_rows_uncorrectable) + " uncorrectable" +
              (c.remapped_rows_pending.value_or(false) ? ", pending" : "") +
              (c.remapped_rows_failed.value_or(false) ? ", FAILED" : "");
    if (c.retired_pages_sbe || c.retired_pages_dbe)
      line += "; retired pages " + num_or_na(c.retired_pages_sbe) + " SBE, " + num_or_na(c.retired_pages_dbe) + " DBE";
    if (c.clock_event_reasons) {
      std::string names;
      for (const std::string& n : clock_event_names(*c.clock_event_reasons)) names += (names.empty() ? "" : ", ") + n;
      line += "; clocks: " + (names.empty() ? std::string("no slowdown") : names);
    }
    if (c.pcie_replay_count) line += "; PCIe replays " + std::to_string(*c.pcie_replay_count);
    line += "; Xids " + std::to_string(g.xids_since_boot) + " since boot";
    if (a.since_s) line += ", " + std::to_string(g.xids_in_window) + " in the window";
    t += fit_line(line, st);
  }
  if (a.faults.empty()) {
    t += fit_line(a.since_s ? "No fault in the last " + std::to_string(std::lround(*a.since_s)) + " s." : "No fault since boot.", st);
    return t;
  }
  t += "\n";
  for (const HealthFault& f : a.faults) {
    std::string head = std::string(severity_name(f.severity)) + ": " + f.message;
    if (f.age_s) head += " (" + age_words(*f.age_s) + ")";
    if (f.xid) head += std::string(" [points at: ") + xid_cause_name(f.xid->cause) + "]";
    t += fit_line(head, st);
    if (f.processes.empty()) t += fit_line("  no process on the GPU", st);
    for (const FaultProcess& p : f.processes)
      t += fit_line(std::string("  ") + (p.named_by_kernel ? "hit: " : "on the GPU: ") + fault_process_words(p), st);
    t += fit_line("  what to do: " + f.action, st);
    if (f.line) t += fit_line("  kernel: " + printable(f.line->message), st);
  }
  return t;
}

}  // namespace gpumap
