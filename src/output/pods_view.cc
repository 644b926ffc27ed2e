#include "output/pods_view.h"

#include "formats/json.h"
#include "model/text.h"
#include "output/json_view.h"
#include "output/ps_view.h"
#include "output/render.h"

namespace gpumap {
namespace {

/// "0 GPU-ef612c2c-fb96-…" for each allocated GPU (MIG devices with their GPU's index), "-" for
/// none; `short_form` (a terminal the table is fitted to) writes each UUID's short prefix, which
/// gpumap accepts back.
std::string allocated_cell(const Snapshot& s, const AllocatedGpus& a, bool short_form) {
  std::string out;
  for (const std::string& u : a.uuids) {
    int i = s.nvml_index_of(u);
    bool shared = std::find(a.shared.begin(), a.shared.end(), u) != a.shared.end();
    bool claimed = std::find(a.claimed.begin(), a.claimed.end(), u) != a.claimed.end();
    out += (out.empty() ? "" : ", ") + (i >= 0 ? std::to_string(i) + " " : "") + (short_form ? short_uuid(u) : u) +
           (shared ? " (shared)" : "") +
           (claimed ? " (claimed)" : "");
  }
  for (const std::string& id : a.unknown) out += (out.empty() ? "" : ", ") + id + " (not on this node)";
  return out.empty() ? "-" : out;
}

/// The frame's findings about a GPU that concern pods (pod-gpu-shared), once per GPU.
std::vector<GpuFinding> pod_gpu_findings(const PodsAnswer& a) {
  std::vector<GpuFinding> out;
  for (const GpuFinding& g : a.frame.result.gpu_findings)
    if (g.finding.id.rfind("pod-", 0) == 0) out.push_back(g);
  return out;
}

std::vector<std::string> process_cells(const ProcessRow& r) {
  return {std::to_string(r.pid), r.pod && !r.pod->container.empty() ? r.pod->container : "?",
          std::to_string(r.nvml_index), r.cuda_ordinal ? "cuda:" + std::to_string(*r.cuda_ordinal) : "-",
          r.used_memory_mib ? std::to_string(*r.used_memory_mib) + " MiB" : "N/A", r.command.value_or("?")};
}

Json process_json(const ProcessRow& r) {
  return {{"pid", r.pid},
          {"container", r.pod && !r.pod->container.empty() ? Json(r.pod->container) : Json(nullptr)},
          {"nvml_index", r.nvml_index},
          {"uuid", r.uuid},
          {"cuda_ordinal", r.cuda_ordinal ? Json(*r.cuda_ordinal) : Json(nullptr)},
          {"used_memory_mib", r.used_memory_mib ? Json(*r.used_memory_mib) : Json(nullptr)},
          {"command", r.command ? Json(*r.command) : Json(nullptr)},
          {"findings", findings_json(r.findings)}};
}

}  // namespace

std::string pods_text(const Snapshot& s, const PodsAnswer& a, const TermStyle& st) {
  std::string t = host_banner(s, st);
  if (!a.kubelet.pods) t += fit_line("pods: the kubelet could not be asked: " + a.kubelet.error, st);
  if (a.kubelet.pods)
    for (const CdiSpecs::Problem& p : a.kubelet.pods->cdi.problems) t += fit_line("cdi: " + printable(p.file + ": " + p.message), st);
  std::vector<std::vector<std::string>> table;
  std::string notes;
  const std::vector<ProcessRow>& rows = a.frame.result.rows;
  auto add_rows = [&](const std::string& pod, const std::string& allocated, const std::vector<size_t>& positions) {
    if (positions.empty()) table.push_back({pod, allocated, "-", "-", "-", "-", "-", "(no GPU process)"});
    for (size_t i : positions) {
      std::vector<std::string> row = {pod, allocated};
      for (std::string& c : process_cells(rows[i])) row.push_back(std::move(c));
      table.push_back(std::move(row));
      for (const Finding& f : rows[i].findings)
        if (f.severity != Severity::kInfo) notes += render_finding(f, "pid " + std::to_string(rows[i].pid), st);
    }
  };
  for (const PodView& p : a.pods) {
    add_rows(p.ns + "/" + p.name, allocated_cell(s, p.allocated, st.fit), p.rows);
    for (const Finding& f : p.findings) notes += render_finding(f, p.ns + "/" + p.name, st);
  }
  for (const std::vector<size_t>& positions : a.unnamed)
    add_rows("uid " + rows[positions[0]].pod->uid, "?", positions);
  for (const GpuFinding& g : pod_gpu_findings(a)) notes += render_finding(g.finding, "GPU " + std::to_string(g.nvml_index), st);
  for (size_t i : a.unverified)
    notes += fit_line("pid " + std::to_string(rows[i].pid) + ": not taken as a pod: " + printable(rows[i].pod_unverified), st);
  if (table.empty()) {
    t += a.kubelet.pods ? "No pod on this node holds a GPU or runs a GPU process.\n" : "";
  } else {
    t += render_table({"POD", "ALLOCATED (nvidia-smi)", "PID", "CONTAINER", "GPU", "ITS CUDA", "GPU MEMORY", "COMMAND"},
                      table, st, TableFit{{"POD", "ALLOCATED (nvidia-smi)", "CONTAINER", "COMMAND"}, {"GPU MEMORY", "CONTAINER"}, "POD", 20});
  }
  if (!notes.empty()) t += "\nFindings:\n" + notes;
  return t;
}

std::string pods_json(const Snapshot& s, const PodsAnswer& a) {
  Json j = document(s);
  j["kubelet"] = a.kubelet.pods ? Json{{"pods", a.kubelet.pods->pods.size()}, {"error", nullptr}}
                                : Json{{"pods", nullptr}, {"error", {{"code", a.kubelet.code}, {"message", a.kubelet.error}}}};
  const std::vector<ProcessRow>& rows = a.frame.result.rows;
  Json pods = Json::array();
  for (const PodView& p : a.pods) {
    Json allocated = Json::array();
    for (const std::string& u : p.allocated.uuids) {
      int i = s.nvml_index_of(u);
      allocated.push_back({{"uuid", u},
                           {"nvml_index", i >= 0 ? Json(i) : Json(nullptr)},
                           {"shared", std::find(p.allocated.shared.begin(), p.allocated.shared.end(), u) != p.allocated.shared.end()},
                           {"claimed", std::find(p.allocated.claimed.begin(), p.allocated.claimed.end(), u) != p.allocated.claimed.end()}});
    }
    Json containers = Json::array();
    for (const PodContainer& c : p.containers) {
      Json devices = Json::array();
      for (const PodDevices& d : c.devices) devices.push_back({{"resource", d.resource}, {"ids", d.ids}});
      containers.push_back({{"name", c.name}, {"devices", devices}, {"cdi_devices", c.cdi_devices}});
    }
    Json procs = Json::array();
    for (size_t i : p.rows) procs.push_back(process_json(rows[i]));
    pods.push_back({{"name", p.name},
                    {"namespace", p.ns},
                    {"uid", p.uid.empty() ? Json(nullptr) : Json(p.uid)},
                    {"containers", containers},
                    {"allocated", allocated},
                    {"unknown_ids", p.allocated.unknown},
                    {"processes", procs},
                    {"findings", findings_json(p.findings)}});
  }
  j["pods"] = pods;
  Json unnamed = Json::array();
  for (const std::vector<size_t>& positions : a.unnamed) {
    Json procs = Json::array();
    for (size_t i : positions) procs.push_back(process_json(rows[i]));
    unnamed.push_back({{"uid", rows[positions[0]].pod->uid}, {"processes", procs}});
  }
  j["unnamed_pods"] = unnamed;
  Json unverified = Json::array();  // a cgroup that names a pod, not the kubelet's: never attributed
  for (size_t i : a.unverified) unverified.push_back({{"pid", rows[i].pid}, {"why", rows[i].pod_unverified}});
  j["unverified_pods"] = unverified;
  j["findings"] = ps_gpu_findings_json(pod_gpu_findings(a));  // about a GPU, as ps's document
  if (a.kubelet.pods) {
    const CdiSpecs& c = a.kubelet.pods->cdi;
    Json problems = Json::array();
    for (const CdiSpecs::Problem& p : c.problems) problems.push_back({{"file", p.file}, {"message", p.message}});
    j["cdi"] = {{"dirs", c.dirs}, {"devices", c.devices.size()}, {"problems", problems}};
  } else {
    j["cdi"] = nullptr;
  }
  return dump(j);
}

std::string render_pods(const Snapshot& s, const PodsAnswer& a, bool json) {
  return json ? pods_json(s, a) : pods_text(s, a);
}

}  // namespace gpumap
