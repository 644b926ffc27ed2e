// One process in detail: top's Enter screen and `gpumap ps --pid N`.
#include <algorithm>

#include "model/text.h"
#include "output/style.h"
#include "output/top_view.h"

namespace gpumap {

using LineBuilder = TopLineBuilder;

std::vector<TopLine> process_detail(const Snapshot* snapshot, const PsResult& result, uint32_t pid, size_t width) {
  std::vector<TopLine> out;
  const size_t wide = 100000;  // fixes and values are cut when drawn (horizontal scroll), never wrapped
  auto wrapped = [&](const std::string& text, size_t indent, TopAttr a, bool commands) {
    std::string t = wrap(text, width, indent, indent + 4, commands);
    for (size_t at = 0;;) {
      size_t nl = t.find('\n', at);
      out.push_back(LineBuilder{wide}.add(t.substr(at, nl == std::string::npos ? nl : nl - at), a).done());
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
  };
  std::vector<const ProcessRow*> rows;
  for (const ProcessRow& r : result.rows)
    if (r.pid == pid) rows.push_back(&r);
  if (rows.empty()) {
    out.push_back(LineBuilder{wide}
                      .add("process " + std::to_string(pid) + " is no longer on any GPU", TopAttr::kWarn)
                      .done());
    return out;
  }
  const ProcessRow& r = *rows.front();
  std::string state = process_state_name(r.state);
  out.push_back(LineBuilder{wide}
                    .add("PID " + std::to_string(r.pid), TopAttr::kBold)
                    .add(r.local_pid && *r.local_pid != r.pid ? " (here " + std::to_string(*r.local_pid) + ")" : "")
                    .add("  user " + printable(r.user.value_or("?")) + "  " + state)
                    .done());
  out.push_back(LineBuilder{wide}.add("command: ").add(printable(r.command.value_or("?"))).done());
  if (r.pod)
    out.push_back(LineBuilder{wide}
                      .add("pod: ")
                      .add(printable(r.pod->name.empty() ? "(not named by the kubelet)" : r.pod->ns + "/" + r.pod->name))
                      .add(r.pod->container.empty() ? "" : ", container " + printable(r.pod->container))
                      .add("  uid " + r.pod->uid, TopAttr::kDim)
                      .done());
  for (const ProcessRow* g : rows) {
    std::string line = "GPU " + std::to_string(g->nvml_index) + " " + g->uuid + ": " + top_column(TopColumn::kMemory).value(*g, nullptr) +
                       ", it calls it " + top_column(TopColumn::kCuda).value(*g, nullptr);
    out.push_back(LineBuilder{wide}.add(line).done());
  }
  out.push_back({});
  out.push_back(LineBuilder{wide}.add("Variables it started with", TopAttr::kHeader).done());
  if (!r.environ_known) {
    out.push_back(LineBuilder{wide}
                      .add("  its environment cannot be read (" +
                               (r.environ_error.empty() ? std::string("not visible") : r.environ_error) + ")",
                           TopAttr::kDim)
                      .done());
  } else {
    auto var = [&](const char* name, const std::optional<std::string>& value) {
      out.push_back(LineBuilder{wide}
                        .add(std::string("  ") + name + "=")
                        .add(value ? printable(*value) : "(unset)", value ? TopAttr::kNormal : TopAttr::kDim)
                        .done());
    };
    var("CUDA_VISIBLE_DEVICES", r.cuda_visible_devices);
    var("CUDA_DEVICE_ORDER", r.cuda_device_order);
    var("NVIDIA_VISIBLE_DEVICES", r.nvidia_visible_devices);
    if (r.local_rank) var("LOCAL_RANK", r.local_rank);
    if (r.slurm_localid) var("SLURM_LOCALID", r.slurm_localid);
    if (r.slurm_job_id) var("SLURM_JOB_ID", r.slurm_job_id);
    if (r.slurm_procid) var("SLURM_PROCID", r.slurm_procid);
    if (r.environ_truncated)
      out.push_back(LineBuilder{wide}.add("  (its environment was cut: variables past the cut read as unset)",
                                          TopAttr::kDim).done());
  }
  out.push_back({});
  out.push_back(LineBuilder{wide}.add("Its cuda:N", TopAttr::kHeader).done());
  if (r.cuda_error) {
    out.push_back(LineBuilder{wide}.add("  CUDA fails to start for it: " + *r.cuda_error, TopAttr::kBad).done());
  } else if (r.view && *r.view < result.views.size() && snapshot) {
    const CudaView& view = result.views[*r.view];
    if (view.uuids.empty()) out.push_back(LineBuilder{wide}.add("  it sees no GPU", TopAttr::kWarn).done());
    for (size_t n = 0; n < view.uuids.size(); ++n) {
      Snapshot::DeviceRef d = snapshot->find_device(view.uuids[n]);
      std::string where = d.gpu ? "nvidia-smi " + std::to_string(d.gpu->nvml_index) : "?";
      if (d.mig) where += " MIG";
      std::string name = d.gpu ? "  " + short_cell(d.gpu->name) : "";
      bool this_gpu = std::any_of(rows.begin(), rows.end(), [&](const ProcessRow* g) { return g->uuid == view.uuids[n]; });
      out.push_back(LineBuilder{wide}
                        .add("  cuda:" + std::to_string(n) + " -> " + where + "  " + view.uuids[n] + name,
                             this_gpu ? TopAttr::kBold : TopAttr::kNormal)
                        .done());
    }
  } else {
    out.push_back(LineBuilder{wide}.add("  unknown (its environment cannot be read)", TopAttr::kDim).done());
  }
  out.push_back({});
  out.push_back(LineBuilder{wide}.add("Findings", TopAttr::kHeader).done());
  size_t n = 0;
  auto finding = [&](const Finding& fd, const std::string& where) {
    ++n;
    size_t first = out.size();
    std::string head = "[" + std::string(severity_name(fd.severity)) + "] ";
    wrapped(head + fd.id + where + ": " + printable(fd.message), 2, TopAttr::kNormal, false);
    out[first] = LineBuilder{wide}  // the severity in its colour
                     .add("  " + head, top_severity_attr(fd.severity))
                     .add(out[first].empty() ? "" : out[first][0].text.substr(std::min(out[first][0].text.size(), 2 + head.size())))
                     .done();
    if (!fd.fix.empty()) out.push_back(LineBuilder{wide}.add("      fix: ", TopAttr::kDim).add(printable(fd.fix), TopAttr::kBold).done());
    if (!fd.note.empty()) wrapped("note: " + printable(fd.note), 6, TopAttr::kDim, true);
  };
  for (const ProcessRow* g : rows) {
    for (const Finding& fd : g->findings) finding(fd, " (GPU " + std::to_string(g->nvml_index) + ")");
    for (size_t i : g->gpu_findings)
      if (i < result.gpu_findings.size())
        finding(result.gpu_findings[i].finding, " (GPU " + std::to_string(g->nvml_index) + ")");
  }
  if (n == 0) out.push_back(LineBuilder{wide}.add("  none", TopAttr::kGood).done());
  return out;
}


}  // namespace gpumap
