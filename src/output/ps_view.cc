// gpumap ps's process rows as JSON: one object per line, serialised directly (10 000 rows
// would otherwise build one big tree).  The keys are the contract in docs/ps.md and docs/cli.md.
#include "output/ps_view.h"

#include <cctype>

#include <algorithm>
#include <map>
#include <set>

#include "findings/severity.h"
#include "model/text.h"
#include "output/render.h"
#include "output/top_view.h"

namespace gpumap {
namespace {

/// The lease object, plus whether this row's process is the one holding it.
Json row_lease_json(const std::optional<LeaseState>& st, const ProcessRow& r) {
  if (!st || !st->held) return nullptr;
  Json j = lease_json(*st);
  j["this_process"] = st->holder && r.local_pid && st->holder->pid == static_cast<int64_t>(*r.local_pid);
  return j;
}

/// Appends `v` as a JSON string.  Plain ASCII (the usual case) is copied as is; anything
/// else goes through nlohmann's escaper.  10 000 rows make ~10 MB: this path keeps it fast.
void put_str(std::string& out, const std::string& v) {
  for (unsigned char c : v)
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      out += Json(v).dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
    }
  out += '"';
  out += v;
  out += '"';
}

void put_key(std::string& out, const char* key, bool first = false) {
  if (!first) out += ',';
  out += '"';
  out += key;
  out += "\":";
}

void put_opt_str(std::string& out, const char* key, const std::optional<std::string>& v) {
  put_key(out, key);
  if (v) put_str(out, *v);
  else out += "null";
}

template <class T>
void put_opt_num(std::string& out, const char* key, const std::optional<T>& v) {
  put_key(out, key);
  out += v ? std::to_string(*v) : "null";
}

/// The running processes whose environment this user may not read (another user's): their `?`
/// cells need root, the one thing to do, said where the `?` is seen (issue 43 item 3).
std::vector<uint32_t> environ_denied(const PsResult& res) {
  std::vector<uint32_t> pids;
  for (const ProcessRow& r : res.rows)
    if (r.state == ProcessState::kRunning && !r.environ_known && r.environ_access == ProcAccess::kDenied &&
        std::find(pids.begin(), pids.end(), r.pid) == pids.end())
      pids.push_back(r.pid);
  return pids;
}

const char kAsRoot[] = "sudo gpumap ps";

}  // namespace

std::string ps_row_json(const ProcessRow& r, const std::optional<LeaseState>& lease) {
  std::string out = "{";
  put_key(out, "pid", true);
  out += std::to_string(r.pid);
  put_opt_num(out, "local_pid", r.local_pid);
  put_key(out, "nspid");
  if (r.nspid) {
    out += '[';
    for (size_t i = 0; i < r.nspid->size(); ++i) out += (i ? "," : "") + std::to_string((*r.nspid)[i]);
    out += ']';
  } else {
    out += "null";
  }
  put_key(out, "state");
  put_str(out, process_state_name(r.state));
  put_key(out, "nvml_index");
  out += std::to_string(r.nvml_index);
  put_key(out, "uuid");
  put_str(out, r.uuid);
  put_key(out, "type");
  put_str(out, r.type);
  put_opt_num(out, "used_memory_mib", r.used_memory_mib);
  put_opt_num(out, "sm_utilization", r.sm_utilization);
  put_opt_num(out, "memory_utilization", r.memory_utilization);
  put_opt_str(out, "user", r.user);
  put_opt_num(out, "uid", r.uid);
  put_opt_str(out, "command", r.command);
  put_key(out, "command_truncated");
  out += r.command_truncated ? "true" : "false";
  put_key(out, "environ");
  put_str(out, r.environ_known                        ? "ok"
               : r.state == ProcessState::kRunning ? proc_access_name(r.environ_access)
                                                   : "unknown");
  put_key(out, "environ_truncated");
  out += r.environ_truncated ? "true" : "false";
  put_opt_str(out, "cuda_visible_devices", r.cuda_visible_devices);
  put_opt_str(out, "cuda_device_order", r.cuda_device_order);
  put_opt_str(out, "nvidia_visible_devices", r.nvidia_visible_devices);
  put_opt_str(out, "local_rank", r.local_rank);
  put_opt_str(out, "slurm_localid", r.slurm_localid);
  put_opt_str(out, "slurm_job_id", r.slurm_job_id);
  put_opt_str(out, "slurm_procid", r.slurm_procid);
  put_opt_str(out, "global_rank", r.global_rank);
  put_opt_str(out, "global_rank_variable",
              r.global_rank_variable.empty() ? std::nullopt : std::optional<std::string>(r.global_rank_variable));
  put_opt_num(out, "cuda_ordinal", r.cuda_ordinal);
  put_opt_str(out, "cuda_error", r.cuda_error);
  put_opt_num(out, "cuda_device_count", r.cuda_device_count);
  put_key(out, "container_gpus");  // its container's GPUs when cuda_ordinal is CUDA's inside it; null: the host's
  out += r.container_gpus ? Json(*r.container_gpus).dump() : "null";
  put_opt_str(out, "rank_variable", r.rank_variable.empty() ? std::nullopt : std::optional<std::string>(r.rank_variable));
  put_opt_num(out, "rank_value", r.rank);
  put_opt_num(out, "rank_nvml_index", r.rank_nvml_index);
  put_opt_num(out, "bound_own_gpus", r.bound_own);
  // Its Kubernetes pod (dcgm-exporter's names: pod, namespace, container): null outside one, and
  // the names null while the kubelet has not named them.
  auto named = [](const std::string& v) { return v.empty() ? std::nullopt : std::optional<std::string>(v); };
  put_opt_str(out, "pod_uid", r.pod ? std::optional<std::string>(r.pod->uid) : std::nullopt);
  put_opt_str(out, "pod", r.pod ? named(r.pod->name) : std::nullopt);
  put_opt_str(out, "namespace", r.pod ? named(r.pod->ns) : std::nullopt);
  put_opt_str(out, "container", r.pod ? named(r.pod->container) : std::nullopt);
  put_opt_str(out, "container_id", r.pod ? named(r.pod->container_id) : std::nullopt);
  // Its cgroup names a pod outside the kubelet's root-owned hierarchy: why it is not taken as one.
  put_opt_str(out, "pod_unverified", named(r.pod_unverified));
  put_key(out, "pod_allocated");  // the GPU (and MIG) UUIDs the kubelet gave its container (or pod)
  out += r.pod && r.pod->allocation_known ? Json(r.pod->allocated).dump() : "null";
  put_key(out, "lease");
  out += dump(row_lease_json(lease, r), true);
  out.pop_back();  // dump's newline
  put_key(out, "findings");
  out += dump(findings_json(r.findings), true);  // one writer for findings (json_view.h)
  out.pop_back();                                // dump's newline
  put_key(out, "gpu_findings");
  out += '[';
  for (size_t i = 0; i < r.gpu_findings.size(); ++i) out += (i ? "," : "") + std::to_string(r.gpu_findings[i]);
  out += "]}";
  return out;
}

Json ps_gpu_findings_json(const std::vector<GpuFinding>& fs) {
  Json out = Json::array();
  for (const GpuFinding& g : fs) {
    Json f = findings_json({g.finding})[0];
    f["nvml_index"] = g.nvml_index;
    f["uuid"] = g.uuid;
    f["pids"] = g.pids;
    out.push_back(f);
  }
  return out;
}


std::string ps_frame_json(const Snapshot& s, const PsFrame& frame, bool one_line) {
  const PidNamespaceView& ns = frame.ns;
  Json head = document(s);
  head["proc_root"] = frame.proc_root;
  head["pid_namespace"] = {{"joinable", ns.joinable},
                           {"procfs", json_or_null(ns.procfs)},
                           {"nvml", json_or_null(ns.nvml)},
                           {"note", ns.note}};
  head["unlisted_gpus"] = frame.result.unlisted_gpus;
  // Which node and GPUs this is: `gpumap job` joins one such document per node.
  head["host"] = frame.host;
  head["slurm_node"] = json_or_null(frame.slurm_node);
  Json gpus = Json::array();
  for (const Gpu& g : s.gpus) gpus.push_back(gpu_ref_json(g.nvml_index, g.uuid, g.pci_bus_id, g.minor_number));
  head["gpus"] = gpus;
  // Asked only when a process runs in a pod: the pods it listed, or why it could not.
  if (!frame.kubelet) head["kubelet"] = nullptr;
  else if (frame.kubelet->pods) head["kubelet"] = {{"pods", frame.kubelet->pods->pods.size()}, {"error", nullptr}};
  else head["kubelet"] = {{"pods", nullptr}, {"error", {{"code", frame.kubelet->code}, {"message", frame.kubelet->error}}}};
  // Other users' environments this user cannot read: the command that reads them, beside the pids.
  std::vector<uint32_t> denied = environ_denied(frame.result);
  if (denied.empty()) head["needs_root"] = nullptr;
  else head["needs_root"] = {{"pids", denied}, {"command", kAsRoot}};
  // The document's members one by one: the head's on the first line, then the process list
  // (a row per line unless `one_line`), then the findings.
  const char* nl = one_line ? "" : "\n";
  std::string out = "{";
  bool first = true;
  for (auto it = head.begin(); it != head.end(); ++it) {
    if (!first) out += ',';
    put_str(out, it.key());
    out += ':';
    out += it.value().dump(-1, ' ', false, Json::error_handler_t::replace);
    first = false;
  }
  out += std::string(",") + nl + "\"processes\": [";
  bool first_row = true;
  for (const ProcessRow& r : frame.result.rows) {
    out += first_row ? nl : std::string(",") + nl;
    auto lease = frame.leases.find(r.uuid);
    out += ps_row_json(r, lease == frame.leases.end() ? std::nullopt : lease->second);
    first_row = false;
  }
  out += std::string(first_row ? "" : nl) + "]," + nl + "\"findings\": ";
  out += ps_gpu_findings_json(frame.result.gpu_findings).dump(-1, ' ', false, Json::error_handler_t::replace);
  out += "}\n";
  return out;
}

namespace {

/// `text` with each run of digits, and each GPU or MIG UUID, replaced by '#': two findings with the
/// same shape say the same thing about different pids, ranks or GPUs (rank-on-wrong-gpu names each
/// rank's own GPU by UUID: one finding per job, as `top` shows it).
std::string shape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (text.compare(i, 4, "GPU-") == 0 || text.compare(i, 4, "MIG-") == 0) {
      size_t k = i + 4;
      while (k < text.size() && (std::isxdigit(static_cast<unsigned char>(text[k])) || text[k] == '-')) ++k;
      if (k > i + 4) {
        out += '#';
        i = k - 1;
        continue;
      }
    }
    bool digit = c >= '0' && c <= '9';
    if (!digit) out += c;
    else if (out.empty() || out.back() != '#') out += '#';
  }
  return out;
}

/// One folded finding: the first of its group, and the pids (and GPUs) it was seen on.
struct Fold {
  Finding finding;
  std::string scope;  // "job torchrun 1234" or "GPU 0"
  std::vector<uint32_t> pids;
  std::set<uint32_t> gpus;
};

}  // namespace

namespace {

/// The POD cell: namespace/name, or the UID's start while the kubelet has not named it.
std::string pod_cell(const ProcessRow& r) {
  if (!r.pod) return "-";
  if (!r.pod->name.empty()) return r.pod->ns + "/" + r.pod->name;
  return "uid " + r.pod->uid.substr(0, 8) + "\u2026";
}

}  // namespace

std::string ps_frame_text(const Snapshot& s, const PsFrame& frame, const TermStyle& st, const PsTextOptions& opts) {
  const PsResult& res = frame.result;
  std::vector<std::vector<std::string>> table;
  std::string notes;
  size_t hidden = 0;
  bool pods = std::any_of(res.rows.begin(), res.rows.end(), [](const ProcessRow& r) { return r.pod.has_value(); });
  std::vector<Fold> folds;
  std::map<std::string, size_t> fold_of;  // group key -> position in folds
  std::optional<uint32_t> in_container;   // the first pid whose cuda:N is counted inside its container
  for (const ProcessRow& r : res.rows) {
    std::string cuda = r.cuda_ordinal ? "cuda:" + std::to_string(*r.cuda_ordinal) : r.environ_known ? "none" : "?";
    std::string cmd = r.state == ProcessState::kExited       ? "(exited)"
                      : r.state == ProcessState::kNotVisible ? "(not visible from here)"
                                                             : r.command.value_or("?") + (r.command_truncated ? "\u2026" : "");
    std::string cvd = !r.environ_known ? "?" : r.cuda_visible_devices ? (r.cuda_visible_devices->empty() ? "''" : *r.cuda_visible_devices) : "unset";
    // Its environment was cut (kMaxEnvironBytes): a variable past the cut reads as unset, so
    // "unset" and the cuda:N worked out from it may be wrong: said in the cells, as JSON says it.
    if (r.environ_truncated && !r.cuda_visible_devices) cvd = "unset? (environment cut)";
    if (r.container_renumbers && r.cuda_ordinal) {
      cuda += "*";
      if (!in_container) in_container = r.pid;
    }
    if (r.environ_truncated && r.cuda_ordinal) cuda += "?";
    std::string pid = std::to_string(r.pid);
    if (r.local_pid && *r.local_pid != r.pid) pid += " (" + std::to_string(*r.local_pid) + " here)";
    auto lease = frame.leases.find(r.uuid);
    std::string lease_cell = lease != frame.leases.end() && lease->second ? lease_summary(*lease->second, LeaseWords::kShort) : "";
    table.push_back({pid, r.user.value_or("?"), std::to_string(r.nvml_index), r.uuid,
                     r.used_memory_mib ? std::to_string(*r.used_memory_mib) + " MiB" : "N/A", cuda, cvd,
                     lease_cell.empty() ? "-" : lease_cell, cmd});
    if (pods) table.back().insert(table.back().end() - 1, pod_cell(r));
    for (const Finding& fd : r.findings) {
      if (fd.severity == Severity::kInfo && !opts.all_findings) {
        ++hidden;
        continue;
      }
      std::string scope = !r.job.empty()            ? "job " + r.job
                          : r.slurm_job_id          ? "Slurm job " + *r.slurm_job_id
                                                    : "GPU " + std::to_string(r.nvml_index);
      std::string key = fd.id + '\n' + scope + '\n' + shape(fd.message) + '\n' + shape(fd.fix) + '\n' + shape(fd.note);
      auto [it, added] = fold_of.emplace(key, folds.size());
      if (added) folds.push_back({fd, scope, {}, {}});
      folds[it->second].pids.push_back(r.pid);
      folds[it->second].gpus.insert(r.nvml_index);
    }
  }
  for (const Fold& f : folds) {
    if (f.pids.size() == 1) {
      notes += render_finding(f.finding, "pid " + std::to_string(f.pids[0]) + ", GPU " + std::to_string(*f.gpus.begin()), st);
      continue;
    }
    std::vector<std::string> pids, gpus;
    for (uint32_t p : f.pids) pids.push_back(std::to_string(p));
    for (uint32_t g : f.gpus) gpus.push_back(std::to_string(g));
    std::string where = f.scope.rfind("GPU ", 0) == 0 ? f.scope : f.scope + ", GPU" + (gpus.size() == 1 ? " " : "s ") + join(gpus, ", ");
    notes += render_finding(f.finding,
                            where + ", pids " + join(pids, ", ") + " (" + std::to_string(f.pids.size()) +
                                " alike; this one is pid " + pids[0] + "'s)",
                            st);
  }
  std::string t = host_banner(s, st);
  if (!frame.ns.joinable) t += fit_line("PID namespace: " + frame.ns.note, st);
  if (res.rows.empty()) {
    t += "No GPU processes.\n";
  } else {
    std::vector<std::string> heads = {"PID", "USER", "GPU", "UUID", "GPU MEMORY", "ITS CUDA", "CUDA_VISIBLE_DEVICES", "LEASE", "COMMAND"};
    if (pods) heads.insert(heads.end() - 1, "POD");
    // COMMAND tells processes apart: on a narrow terminal LEASE, UUID and USER go before it is cut
    // below 24 columns (--wide or a pipe keeps everything).
    t += render_table(heads, table, st,
                      TableFit{{"USER", "CUDA_VISIBLE_DEVICES", "LEASE", "POD", "COMMAND"}, {"LEASE", "UUID", "USER"}, "COMMAND", 24});
    if (in_container)  // the host's cuda:N for the same variables may differ: said, with where to look
      t += fit_line("cuda:N*: counted inside the process's container, which numbers only its own GPUs from 0 (its map: gpumap ps --pid " +
                        std::to_string(*in_container) + ")",
                    st);
  }
  if (std::vector<uint32_t> denied = environ_denied(res); !denied.empty()) {  // what the ? cells need, under the table
    std::vector<std::string> pids;
    for (uint32_t p : denied) pids.push_back(std::to_string(p));
    bool one = denied.size() == 1;
    t += fit_line(std::string("?: ") + (one ? "another user's environment" : "other users' environments") +
                      ", which this user cannot read: see " + (one ? "it" : "them") + " with " + kAsRoot + " (pid" +
                      (one ? " " : "s ") + join(pids, ", ") + ")",
                  st);
  }
  if (frame.kubelet && !frame.kubelet->pods)  // said once, under the table
    t += fit_line("pods: named by their UID only: " + frame.kubelet->error, st);
  for (uint32_t i : res.unlisted_gpus) t += "GPU " + std::to_string(i) + ": NVML could not list its processes\n";
  bool one_process = !res.rows.empty() && std::all_of(res.rows.begin(), res.rows.end(),
                                                      [&](const ProcessRow& r) { return r.pid == res.rows[0].pid; });
  if (opts.explain_one && one_process)
    return t + "\n" + top_text(process_detail(&s, res, res.rows[0].pid, st.fit ? st.width : 100000), st.color);
  for (const GpuFinding& g : res.gpu_findings) {  // once per GPU, naming its processes
    if (g.finding.severity == Severity::kInfo && !opts.all_findings) {
      ++hidden;
      continue;
    }
    std::vector<std::string> pids;
    for (uint32_t p : g.pids) pids.push_back(std::to_string(p));
    notes += render_finding(g.finding,
                            "GPU " + std::to_string(g.nvml_index) + ", pid" + (pids.size() == 1 ? " " : "s ") + join(pids, ", "), st);
  }
  if (!notes.empty()) t += "\nFindings:\n" + notes;
  if (hidden)
    t += std::string(notes.empty() ? "\n" : "") +
         fit_line(std::to_string(hidden) + " info finding" + (hidden == 1 ? "" : "s") + " hidden: gpumap ps --all shows " +
                      (hidden == 1 ? "it" : "them") + " (--json always has every finding).",
                  st);
  return t;
}

std::string render_ps_frame(const Snapshot& s, const PsFrame& frame, bool json, bool one_line,
                            const PsTextOptions& opts) {
  return json ? ps_frame_json(s, frame, one_line) : ps_frame_text(s, frame, term_style(), opts);
}

}  // namespace gpumap
