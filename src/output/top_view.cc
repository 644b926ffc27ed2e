#include "output/top_view.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <unordered_set>
#include <unordered_map>
#include <tuple>

#include "findings/severity.h"
#include "model/lease.h"
#include "model/text.h"
#include "output/style.h"

namespace gpumap {

const char* top_column_name(TopColumn c) {
  switch (c) {
    case TopColumn::kPid: return "PID";
    case TopColumn::kUser: return "USER";
    case TopColumn::kGpu: return "GPU";
    case TopColumn::kCuda: return "CUDA";
    case TopColumn::kMemory: return "MEM";
    case TopColumn::kUtil: return "SM%";
    case TopColumn::kJob: return "JOB";
    case TopColumn::kRank: return "RANK";
    case TopColumn::kCommand: return "COMMAND";
  }
  return "?";
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}


/// `s` cut or padded to exactly `w` columns (left-aligned, or right-aligned when `right`).
std::string fit(const std::string& s, size_t w, bool right = false) {
  std::string t = display_width(s) > w ? ellipsize(s, w) : s;
  std::string pad(w - std::min(w, display_width(t)), ' ');
  return right ? pad + t : t + pad;
}

// --- the table's cells ---------------------------------------------------------------------------

std::string cell(const ProcessRow& r, TopColumn c) {
  switch (c) {
    case TopColumn::kPid: return std::to_string(r.pid);
    case TopColumn::kUser: return printable(r.user.value_or("?"));
    case TopColumn::kGpu: return std::to_string(r.nvml_index);
    case TopColumn::kCuda:
      if (r.state == ProcessState::kExited) return "exited";
      if (r.state == ProcessState::kNotVisible || !r.environ_known) return "?";
      if (r.cuda_error) return "error";
      if (!r.cuda_ordinal) return "none";
      return "cuda:" + std::to_string(*r.cuda_ordinal) + (r.container_renumbers ? "*" : "");
    case TopColumn::kMemory: return r.used_memory_mib ? std::to_string(*r.used_memory_mib) + "MiB" : "-";
    case TopColumn::kUtil: return r.sm_utilization ? std::to_string(*r.sm_utilization) : "-";
    case TopColumn::kJob:
      if (r.slurm_job_id) return printable(*r.slurm_job_id);
      return r.job.empty() ? "-" : printable(r.job);
    case TopColumn::kRank:  // the global rank (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID...), else the local one
      if (r.global_rank) return printable(*r.global_rank);
      return r.rank ? std::to_string(*r.rank) : "-";
    case TopColumn::kCommand: return printable(r.command.value_or("?"));
  }
  return "";
}

/// The sort key's comparison: numbers as numbers, the rest as text; ties by GPU, then pid.
bool before(const ProcessRow& a, const ProcessRow& b, TopColumn c) {
  auto num = [&](const ProcessRow& r) -> std::tuple<int, int64_t> {
    switch (c) {
      case TopColumn::kPid: return {0, r.pid};
      case TopColumn::kGpu: return {0, r.nvml_index};
      case TopColumn::kCuda: return {r.cuda_ordinal ? 0 : 1, r.cuda_ordinal.value_or(0)};
      case TopColumn::kMemory: return {0, static_cast<int64_t>(r.used_memory_mib.value_or(0))};
      case TopColumn::kUtil: return {r.sm_utilization ? 0 : 1, r.sm_utilization.value_or(0)};
      case TopColumn::kRank: return {r.rank ? 0 : 1, r.rank.value_or(0)};
      default: return {0, 0};
    }
  };
  bool text = c == TopColumn::kUser || c == TopColumn::kJob || c == TopColumn::kCommand;
  if (text) {
    std::string x = cell(a, c), y = cell(b, c);
    if (x != y) return x < y;
  } else if (num(a) != num(b)) {
    return num(a) < num(b);
  }
  return std::tie(a.nvml_index, a.pid) < std::tie(b.nvml_index, b.pid);
}

bool matches(const ProcessRow& r, const std::string& filter) {
  if (filter.empty()) return true;
  size_t colon = filter.find(':');
  std::string key = colon == std::string::npos ? "" : lower(filter.substr(0, colon));
  std::string value = colon == std::string::npos ? filter : filter.substr(colon + 1);
  if (key == "user") return r.user == value || (r.uid && std::to_string(*r.uid) == value);
  if (key == "gpu")
    return all_digits(value) ? std::to_string(r.nvml_index) == value
                             : lower(r.uuid).rfind(lower(value), 0) == 0;
  if (key == "job") return (r.slurm_job_id && *r.slurm_job_id == value) || r.job.find(value) != std::string::npos;
  if (key == "pid")
    return std::to_string(r.pid) == value || (r.local_pid && std::to_string(*r.local_pid) == value);
  std::string v = lower(filter);
  return lower(r.command.value_or("")).find(v) != std::string::npos ||
         lower(r.user.value_or("")).find(v) != std::string::npos;
}

// --- findings, each once per GPU ---------------------------------------------------------------

struct ShownFinding {
  Severity severity;
  std::string id;
  uint32_t gpu = 0;
  std::vector<uint32_t> pids;
  std::string message, fix;
};

std::vector<ShownFinding> shown_findings(const PsResult& ps) {
  std::vector<ShownFinding> out;
  std::map<std::pair<std::string, uint32_t>, size_t> at;
  for (const ProcessRow& r : ps.rows)
    for (const Finding& f : r.findings) {
      auto key = std::make_pair(f.id, r.nvml_index);
      auto it = at.find(key);
      if (it == at.end()) {
        at[key] = out.size();
        out.push_back({f.severity, f.id, r.nvml_index, {r.pid}, f.message, f.fix});
      } else if (std::find(out[it->second].pids.begin(), out[it->second].pids.end(), r.pid) ==
                 out[it->second].pids.end()) {
        out[it->second].pids.push_back(r.pid);
      }
    }
  for (const GpuFinding& g : ps.gpu_findings)
    out.push_back({g.finding.severity, g.finding.id, g.nvml_index, g.pids, g.finding.message, g.finding.fix});
  std::stable_sort(out.begin(), out.end(), [](const ShownFinding& a, const ShownFinding& b) {
    return std::make_tuple(-static_cast<int>(a.severity), a.gpu) < std::make_tuple(-static_cast<int>(b.severity), b.gpu);
  });
  return out;
}

TopAttr severity_attr(Severity s) {
  return s == Severity::kError ? TopAttr::kBad : s == Severity::kWarning ? TopAttr::kWarn : TopAttr::kInfo;
}

/// The worst finding that concerns a row (its own and its GPU's), if any.
std::optional<Severity> worst_for(const ProcessRow& r, const PsResult& ps) {
  std::optional<Severity> w;
  auto add = [&](Severity s) {
    if (!w || s > *w) w = s;
  };
  for (const Finding& f : r.findings) add(f.severity);
  for (size_t i : r.gpu_findings)
    if (i < ps.gpu_findings.size()) add(ps.gpu_findings[i].finding.severity);
  return w;
}

std::string pid_list(const std::vector<uint32_t>& pids) {
  std::string s;
  for (size_t i = 0; i < pids.size() && i < 4; ++i) s += (i ? "," : "") + std::to_string(pids[i]);
  if (pids.size() > 4) s += ",+" + std::to_string(pids.size() - 4);
  return s;
}

std::string clock_text(int64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  struct tm tm {};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 && s != static_cast<int>(s) ? "%.2gs" : "%.0fs", s);
  return buf;
}

// --- lines ---------------------------------------------------------------------------------------

/// Appends spans and cuts the line at `width` columns.
struct LineBuilder {
  explicit LineBuilder(size_t w) : width(w) {}
  size_t width;
  TopLine line;
  size_t used = 0;
  LineBuilder& add(const std::string& text, TopAttr a = TopAttr::kNormal) {
    if (used >= width || text.empty()) return *this;
    std::string t = display_width(text) > width - used ? ellipsize(text, width - used) : text;
    used += display_width(t);
    line.push_back({t, a});
    return *this;
  }
  TopLine done() { return std::move(line); }
};

/// Temperature and power as a monitor shows them ("34C 120/700W"); "" when the driver said neither.
std::string sensors(const Gpu& g) {
  std::string s;
  if (g.temperature_c) s = std::to_string(*g.temperature_c) + "C";
  if (g.power_draw_w) {
    s += (s.empty() ? "" : " ") + std::to_string(static_cast<int>(*g.power_draw_w + 0.5));
    if (std::optional<double> limit = g.enforced_power_limit_w ? g.enforced_power_limit_w : g.power_limit_w)
      s += "/" + std::to_string(static_cast<int>(*limit + 0.5));
    s += "W";
  }
  return s;
}

std::string gpu_label(const Gpu& g) {
  std::string name = short_cell(g.name);
  if (g.mig_enabled.value_or(false)) name += " MIG x" + std::to_string(g.mig_devices.size());
  return name;
}

/// The lease of a GPU and the Slurm jobs on it, in a few words.
std::string gpu_holders(const Gpu& g, const TopFrame& f) {
  std::string s;
  if (auto it = f.ps.leases.find(g.uuid); it != f.ps.leases.end() && it->second && it->second->held)
    s = "lease " + lease_summary(*it->second, LeaseWords::kShort);
  std::set<std::string> jobs;
  for (const ProcessRow& r : f.ps.result.rows)
    if (r.nvml_index == g.nvml_index && r.slurm_job_id) jobs.insert(printable(*r.slurm_job_id));
  if (!jobs.empty()) {
    s += s.empty() ? "" : "  ";
    s += jobs.size() == 1 ? "job " + *jobs.begin() : std::to_string(jobs.size()) + " jobs";
  }
  return s;
}

void gpu_lines(std::vector<TopLine>& out, const Gpu& g, const TopFrame& f, const TopHistory& h, const TopView& v,
               size_t width, int lines_per_gpu) {
  auto here = f.cuda_here.find(g.uuid);
  std::string cuda = here == f.cuda_here.end() ? "-" : "cuda:" + std::to_string(here->second);
  std::optional<uint32_t> mem_pct;
  if (g.memory_used_mib && g.memory_total_mib && *g.memory_total_mib)
    mem_pct = static_cast<uint32_t>(*g.memory_used_mib * 100 / *g.memory_total_mib);
  std::string util_num = g.utilization_gpu ? std::to_string(*g.utilization_gpu) + "%" : "N/A";
  std::string mem_num = g.memory_used_mib && g.memory_total_mib
                            ? std::to_string(*g.memory_used_mib) + "/" + std::to_string(*g.memory_total_mib) + "MiB"
                            : "N/A";
  auto level = [](std::optional<uint32_t> p) {
    return !p ? TopAttr::kDim : *p >= 90 ? TopAttr::kBad : *p >= 60 ? TopAttr::kWarn : TopAttr::kGood;
  };
  auto index_and_cuda = [&](LineBuilder& b) -> LineBuilder& {
    return b.add(fit(std::to_string(g.nvml_index), 2, true) + " ", TopAttr::kBold)
        .add(fit(cuda, 7) + " ", here == f.cuda_here.end() ? TopAttr::kDim : TopAttr::kBold);
  };
  auto load = [&](LineBuilder& b, size_t bar, size_t number) {
    b.add("UTIL")
        .add(top_bar(g.utilization_gpu, bar, v.utf8), level(g.utilization_gpu))
        .add(fit(util_num, number, true) + "  ")
        .add("MEM")
        .add(top_bar(mem_pct, bar, v.utf8), level(mem_pct))
        .add(" " + mem_num);
  };
  if (lines_per_gpu == 1) {  // "0 cuda:1 H200  UTIL[||||  ] 45%  MEM[|||   ] 40960/143771MiB"
    size_t fixed = 3 + 8 + 14 + 6 + 5 + 5 + 18;
    LineBuilder one{width};
    index_and_cuda(one).add(fit(gpu_label(g), 13) + " ");
    load(one, width > fixed ? std::min<size_t>((width - fixed) / 2, 20) : 2, 4);
    out.push_back(one.done());
    return;
  }
  LineBuilder head{width};
  index_and_cuda(head).add(gpu_label(g) + "  ").add(short_uuid(g.uuid), TopAttr::kDim);
  if (std::string s = sensors(g); !s.empty()) head.add("  " + s);
  std::string holders = gpu_holders(g, f);
  if (!holders.empty()) head.add("  " + printable(holders), TopAttr::kInfo);
  out.push_back(head.done());
  size_t fixed = 3 + 5 + 5 + 2 + 4 + 1 + 20;
  LineBuilder second{width};
  second.add("   ");
  load(second, width > fixed ? std::min<size_t>((width - fixed) / 2, 30) : 2, 5);
  out.push_back(second.done());
  if (lines_per_gpu < 3) return;
  const TopHistory::Series* s = nullptr;
  if (auto it = h.gpus.find(g.uuid); it != h.gpus.end()) s = &it->second;
  size_t spark = width > 16 ? (width - 16) / 2 : 1;
  static const std::deque<uint8_t> none;
  LineBuilder hist{width};
  hist.add("   util ", TopAttr::kDim)
      .add(top_sparkline(s ? s->util : none, spark, v.utf8), TopAttr::kGood)
      .add("  mem ", TopAttr::kDim)
      .add(top_sparkline(s ? s->mem : none, spark, v.utf8), TopAttr::kInfo);
  out.push_back(hist.done());
}

/// Column widths of the process table for `width` columns: the command takes what is left.
std::map<TopColumn, size_t> column_widths(size_t width, const std::vector<TopRow>& rows) {
  std::map<TopColumn, size_t> w = {{TopColumn::kPid, 7},  {TopColumn::kUser, 8}, {TopColumn::kGpu, 4},
                                   {TopColumn::kCuda, 6}, {TopColumn::kMemory, 9}, {TopColumn::kUtil, 4},
                                   {TopColumn::kJob, 7},
                                   {TopColumn::kRank, 4}, {TopColumn::kCommand, 0}};
  // The CUDA column is what top is for: it always fits its longest value ("cuda:12*"), at the
  // command's cost.
  for (const TopRow& r : rows)
    if (r.row) w[TopColumn::kCuda] = std::max(w[TopColumn::kCuda], std::min(display_width(cell(*r.row, TopColumn::kCuda)), size_t{10}));
  // Wider terminals: the user and job columns grow to their longest value (up to a limit) first.
  size_t fixed = 0;
  for (auto& [c, n] : w) fixed += n + 1;
  size_t spare = width > fixed + 24 ? width - fixed - 24 : 0;
  for (TopColumn c : {TopColumn::kUser, TopColumn::kJob}) {
    size_t longest = 0;
    for (const TopRow& r : rows)
      if (r.row) longest = std::max(longest, display_width(cell(*r.row, c)));
    size_t grow = std::min({spare, longest > w[c] ? longest - w[c] : 0, size_t{16}});
    w[c] += grow;
    spare -= grow;
  }
  size_t used = 0;
  for (auto& [c, n] : w)
    if (c != TopColumn::kCommand) used += n + 1;
  w[TopColumn::kCommand] = width > used ? width - used : 1;
  return w;
}

bool right_aligned(TopColumn c) {
  return c == TopColumn::kPid || c == TopColumn::kMemory || c == TopColumn::kGpu || c == TopColumn::kUtil;
}

TopLine table_header(const std::map<TopColumn, size_t>& w, const TopView& v, size_t width) {
  LineBuilder b{width};
  for (TopColumn c : kTopColumns) {
    std::string name = top_column_name(c);
    if (c == v.sort) name += v.reverse ? (v.utf8 ? "▲" : "^") : (v.utf8 ? "▼" : "v");
    b.add(fit(name, w.at(c), right_aligned(c)) + (c == TopColumn::kCommand ? "" : " "), TopAttr::kHeader);
  }
  return b.done();
}

TopLine table_line(const TopRow& tr, const TopFrame& f, const std::map<TopColumn, size_t>& w, const TopView& v,
                   bool selected, size_t width) {
  LineBuilder b{width};
  if (!tr.row) {  // a parent that is not a GPU process
    std::string cmd = "?";
    if (auto it = f.parents.find(tr.parent_pid); it != f.parents.end()) cmd = printable(it->second);
    size_t before_command = 0;
    for (const auto& [c, n] : w)
      if (c != TopColumn::kCommand && c != TopColumn::kPid) before_command += n + 1;
    b.add(fit(std::to_string(tr.parent_pid), w.at(TopColumn::kPid), true) + " ", TopAttr::kDim)
        .add(std::string(before_command, ' '))
        .add(cmd, selected ? TopAttr::kSelected : TopAttr::kDim);
    return b.done();
  }
  const ProcessRow& r = *tr.row;
  std::optional<Severity> worst = worst_for(r, f.ps.result);
  if (worst && *worst == Severity::kInfo && !v.show_info) worst.reset();
  for (TopColumn c : kTopColumns) {
    std::string text = cell(r, c);
    if (c == TopColumn::kCommand && tr.depth > 0)
      text = std::string(2 * (tr.depth - 1), ' ') + (v.utf8 ? "└─ " : "`- ") + text;
    TopAttr a = selected ? TopAttr::kSelected : TopAttr::kNormal;
    if (!selected && c == TopColumn::kCuda && worst) a = severity_attr(*worst);
    if (!selected && r.state == ProcessState::kExited) a = TopAttr::kDim;
    b.add(fit(text, w.at(c), right_aligned(c)) + (c == TopColumn::kCommand ? "" : " "), a);
  }
  return b.done();
}

std::vector<TopLine> help_lines(size_t width) {
  static const char* kKeys[][2] = {
      {"q, Ctrl-C", "quit"},
      {"h, ?", "this help (any key closes it)"},
      {"Up, Down", "select a process"},
      {"PgUp, PgDn, Home, End", "a page up or down, the first, the last"},
      {"Enter", "the process in detail: its CUDA variables, its own cuda:N map, its findings and fixes"},
      {"<, >", "sort by the column to the left / right"},
      {"r", "reverse the sort"},
      {"/", "filter: user:NAME, gpu:N or gpu:UUID, job:ID, pid:N, or text in the command (Enter applies, "
            "Esc clears)"},
      {"t", "tree: processes under their parents"},
      {"i", "show or hide info findings"},
      {"k", "send a signal to the selected process (asks first; only processes you may signal)"},
      {"space, p", "pause / resume reading"},
      {"+, -", "refresh faster / slower"},
      {"Esc", "back to the main screen; clear the filter"},
  };
  std::vector<TopLine> out;
  out.push_back(LineBuilder{width}.add("gpumap top: keys", TopAttr::kBold).done());
  out.push_back({});
  for (const auto& k : kKeys) {
    std::string text = wrap(k[1], std::max<size_t>(width, 40), 22, 22).substr(22);
    size_t nl = text.find('\n');
    out.push_back(LineBuilder{width}.add(fit(k[0], 21) + " ", TopAttr::kHeader).add(text.substr(0, nl)).done());
    while (nl != std::string::npos) {
      size_t next = text.find('\n', nl + 1);
      out.push_back(LineBuilder{width}.add(text.substr(nl + 1, next == std::string::npos ? next : next - nl - 1)).done());
      nl = next;
    }
  }
  out.push_back({});
  // One legend, two lines at 80 columns (the screen's last two rows at 80x24); wrapped at words, as
  // cut its end would be lost.
  const char* legend = "cuda:N on a GPU line: this shell's (- : hidden); in the CUDA column: its own "
                       "(none: outside its visible set; cuda:N*: counted inside its container).";
  for (const std::string& line : split(wrap(legend, width, 0, 2), '\n'))
    out.push_back(LineBuilder{width}.add(line, TopAttr::kDim).done());
  return out;
}

}  // namespace

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
    std::string line = "GPU " + std::to_string(g->nvml_index) + " " + g->uuid + ": " + cell(*g, TopColumn::kMemory) +
                       ", it calls it " + cell(*g, TopColumn::kCuda);
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
                     .add("  " + head, severity_attr(fd.severity))
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

namespace {

/// The detail screen's lines (not yet cut to the screen: the caller scrolls them).
std::vector<TopLine> detail_lines(const TopFrame& f, const TopView& v, size_t width) {
  return process_detail(f.snapshot.get(), f.ps.result, v.detail_pid, width);
}

/// A line scrolled `skip` columns to the right and cut at `width`.
TopLine shifted(const TopLine& line, size_t skip, size_t width) {
  LineBuilder b{width};
  for (const TopSpan& s : line) {
    size_t w = display_width(s.text);
    if (skip >= w) {
      skip -= w;
      continue;
    }
    std::string t = s.text;
    if (skip) {  // drop `skip` cells (a wide character cut in two leaves a space for its half)
      size_t i = 0, cut = 0;
      while (cut < skip && i < t.size()) cut += next_char_cells(t, &i);
      t = std::string(cut - skip, ' ') + t.substr(i);
      skip = 0;
    }
    b.add(t, s.attr);
  }
  return b.done();
}

/// Every line in ASCII for a terminal that cannot show UTF-8 (LANG=C, the Linux console): "…"
/// becomes "~", any other non-ASCII character "?" once per cell it took (a wide one "??", so
/// the layout holds).
void asciify(std::vector<TopLine>& lines) {
  for (TopLine& l : lines)
    for (TopSpan& s : l) {
      std::string t;
      for (size_t i = 0; i < s.text.size();) {
        unsigned char c = static_cast<unsigned char>(s.text[i]);
        if (c < 0x80) {
          t += s.text[i++];
          continue;
        }
        size_t at = i, cells = next_char_cells(s.text, &i);
        t += s.text.compare(at, i - at, "…") == 0 ? std::string("~") : std::string(cells, '?');
      }
      s.text = std::move(t);
    }
}

}  // namespace

std::optional<std::string> top_filter_error(const std::string& filter) {
  size_t colon = filter.find(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string key = lower(filter.substr(0, colon)), value = filter.substr(colon + 1);
  if (key != "user" && key != "gpu" && key != "job" && key != "pid") return std::nullopt;  // text with a colon
  if (value.empty()) return "filter '" + filter + "' has no value: write " + key + ":VALUE";
  if (key == "pid" && !all_digits(value)) return "filter '" + filter + "': a pid is a number (pid:1234)";
  return std::nullopt;
}

std::vector<TopRow> top_rows(const TopFrame& frame, const TopView& view) {
  std::vector<const ProcessRow*> rows;
  for (const ProcessRow& r : frame.ps.result.rows)
    if (matches(r, view.filter)) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [&](const ProcessRow* a, const ProcessRow* b) {
    return view.reverse ? before(*b, *a, view.sort) : before(*a, *b, view.sort);
  });
  std::vector<TopRow> out;
  if (!view.tree) {
    for (const ProcessRow* r : rows) out.push_back({r, 0, 0});
    return out;
  }
  // O(rows): each row's children listed once (in the table's order), the tree walked with a
  // stack of its own (a chain of 100 000 parents is no recursion 100 000 deep).
  std::unordered_set<uint32_t> gpu_pids;
  std::unordered_map<uint32_t, std::vector<const ProcessRow*>> children;  // by ppid
  for (const ProcessRow* r : rows) {
    if (r->local_pid) gpu_pids.insert(*r->local_pid);
    if (r->ppid) children[*r->ppid].push_back(r);
  }
  std::unordered_set<const ProcessRow*> done;
  std::unordered_set<uint32_t> expanded;
  std::vector<std::pair<const ProcessRow*, int>> stack;
  auto emit = [&](const ProcessRow* top, int top_depth) {
    stack.push_back({top, top_depth});
    while (!stack.empty()) {
      auto [r, depth] = stack.back();
      stack.pop_back();
      if (!done.insert(r).second) continue;
      out.push_back({r, 0, depth});
      if (!r->local_pid || !expanded.insert(*r->local_pid).second) continue;  // children once, under its first row
      auto it = children.find(*r->local_pid);
      if (it == children.end()) continue;
      for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) stack.push_back({*c, depth + 1});
    }
  };
  std::unordered_set<uint32_t> parents_shown;
  for (const ProcessRow* r : rows) {
    if (done.count(r)) continue;
    bool root = !r->ppid || !gpu_pids.count(*r->ppid);
    if (!root) continue;  // reached from its parent
    if (r->ppid && frame.parents.count(*r->ppid)) {
      if (!parents_shown.insert(*r->ppid).second) continue;  // already emitted with its siblings
      out.push_back({nullptr, *r->ppid, 0});
      for (const ProcessRow* s : children[*r->ppid])
        if (!done.count(s)) emit(s, 1);
    } else {
      emit(r, 0);
    }
  }
  for (const ProcessRow* r : rows) emit(r, 0);  // cycles or parents filtered out: never lose a row
  return out;
}

std::string top_bar(std::optional<uint32_t> percent, size_t width, bool utf8) {
  if (width == 0) return "";
  if (!utf8) {
    size_t filled = percent ? std::min<size_t>(width, (*percent * width + 50) / 100) : 0;
    return "[" + std::string(filled, '|') + std::string(width - filled, percent ? ' ' : '?') + "]";
  }
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  size_t eighths = percent ? std::min<size_t>(width * 8, (*percent * width * 8 + 50) / 100) : 0;
  std::string s = "▕";
  size_t cells = 0;
  for (; cells < eighths / 8; ++cells) s += "█";
  if (cells < width && eighths % 8) {
    s += kEighths[eighths % 8];
    ++cells;
  }
  for (; cells < width; ++cells) s += percent ? " " : "·";
  return s + "▏";
}

std::string top_sparkline(const std::deque<uint8_t>& samples, size_t width, bool utf8) {
  static const char* kLevels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char kAscii[] = "_.-:=+*#";
  std::string s;
  size_t n = std::min(width, samples.size());
  if (width > n) s.append(width - n, ' ');
  for (size_t i = samples.size() - n; i < samples.size(); ++i) {
    uint8_t v = samples[i];
    if (v > 100) {
      s += utf8 ? "·" : "?";
      continue;
    }
    size_t level = std::min<size_t>(7, v * 8 / 101);
    if (utf8) s += kLevels[level];
    else s += kAscii[level];
  }
  return s;
}

namespace {

std::vector<TopLine> render_screen(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                   const TopStatus& status, size_t width, size_t height) {
  std::vector<TopLine> out;
  // Title: host, driver, CUDA, simulated, refresh, time.
  const Snapshot* s = frame.snapshot.get();
  {
    LineBuilder b{width};
    b.add("gpumap top", TopAttr::kBold).add("  " + (frame.ps.host.empty() ? std::string("?") : printable(frame.ps.host)));
    if (s) {
      if (s->simulated) b.add("  SIMULATED", TopAttr::kWarn);
      b.add("  driver " + s->driver_version.value_or("?"));
      if (s->cuda_driver_version)
        b.add("  CUDA " + std::to_string(*s->cuda_driver_version / 1000) + "." +
              std::to_string(*s->cuda_driver_version % 1000 / 10));
    }
    b.add("  every " + seconds_text(view.interval_s));
    if (view.paused) b.add("  PAUSED", TopAttr::kWarn);
    if (status.now_unix_ms) b.add("  " + clock_text(status.now_unix_ms));
    out.push_back(b.done());
  }
  // Status: a failed or hanging read, else what `cuda:N` means here.
  {
    LineBuilder b{width};
    int64_t age_ms = frame.read_unix_ms ? status.now_unix_ms - frame.read_unix_ms : 0;
    bool stale = frame.read_unix_ms && status.reading &&
                 status.now_unix_ms - status.reading_since_ms > static_cast<int64_t>(view.interval_s * 2000) + 2000;
    if (!frame.error.empty()) b.add("read failed: " + printable(frame.error), TopAttr::kBad);
    else if (stale)
      b.add("STALE: the driver has not answered for " +
                std::to_string((status.now_unix_ms - status.reading_since_ms) / 1000) + "s; showing the read of " +
                std::to_string(age_ms / 1000) + "s ago",
            TopAttr::kBad);
    else if (!s && status.reading) b.add("reading the GPUs...", TopAttr::kDim);
    else if (!frame.cuda_here_error.empty())
      b.add("this shell's CUDA_VISIBLE_DEVICES breaks CUDA: " + printable(frame.cuda_here_error), TopAttr::kWarn);
    else if (s)
      b.add(std::to_string(s->gpus.size()) + " GPUs, " + std::to_string(frame.ps.result.rows.size()) +
                " GPU processes; cuda:N after the index is this shell's",
            TopAttr::kDim);
    out.push_back(b.done());
  }
  if (view.screen == TopView::Screen::kHelp) {
    for (TopLine& l : help_lines(width)) out.push_back(std::move(l));
    if (height && out.size() > height) out.resize(height);
    return out;
  }
  if (view.screen == TopView::Screen::kDetail) {
    std::vector<TopLine> d = detail_lines(frame, view, width);
    size_t room = height ? (height > out.size() + 1 ? height - out.size() - 1 : 0) : d.size();
    size_t first = std::min(view.detail_scroll, d.size());
    for (size_t i = first; i < d.size() && i - first < room; ++i) out.push_back(shifted(d[i], view.detail_hscroll, width));
    if (height) {
      while (out.size() + 1 < height) out.push_back({});
      out.push_back(LineBuilder{width}
                        .add("Esc/q back  Up/Down scroll  Left/Right shift  k signal", TopAttr::kDim)
                        .done());
    }
    return out;
  }

  std::vector<TopRow> rows = top_rows(frame, view);
  std::vector<ShownFinding> findings = shown_findings(frame.ps.result);
  size_t hidden_info = 0;
  std::vector<const ShownFinding*> shown;
  for (const ShownFinding& f : findings) {
    if (f.severity == Severity::kInfo && !view.show_info) ++hidden_info;
    else shown.push_back(&f);
  }
  size_t ngpu = s ? s->gpus.size() : 0;
  size_t finding_lines = shown.size() + (hidden_info || !shown.empty() ? 1 : 0);
  int per_gpu = height ? 3 : 2;  // --once: one sample is no history
  size_t table_room = rows.size();
  if (height) {
    size_t findings_room = std::min<size_t>(finding_lines, 4);
    size_t fixed = out.size() + 1 /*table header*/ + findings_room + 1 /*footer*/;
    size_t min_rows = std::min<size_t>(std::max<size_t>(rows.size(), 1), 5);
    while (per_gpu > 1 && fixed + per_gpu * ngpu + min_rows > height) --per_gpu;
    size_t used = fixed + per_gpu * ngpu;
    table_room = height > used ? height - used : 0;
    if (table_room > rows.size()) {  // room to spare: more findings
      size_t extra = std::min(table_room - rows.size(), finding_lines - findings_room);
      findings_room += extra;
      table_room -= extra;
    }
    finding_lines = findings_room;
  }
  if (s)
    for (const Gpu& g : s->gpus) gpu_lines(out, g, frame, history, view, width, per_gpu);
  std::map<TopColumn, size_t> w = column_widths(width, rows);
  out.push_back(table_header(w, view, width));
  size_t first = std::min(view.scroll, rows.size());
  for (size_t i = first; i < rows.size() && i - first < table_room; ++i)
    out.push_back(table_line(rows[i], frame, w, view, height && i == view.selected, width));
  if (rows.empty())
    out.push_back(LineBuilder{width}
                      .add(view.filter.empty() ? "  no GPU processes" : "  no process matches " + printable(view.filter),
                           TopAttr::kDim)
                      .done());
  if (height)
    while (out.size() + finding_lines + 1 < height) out.push_back({});
  // Findings, each once per GPU; the full text and fixes are in the detail view.
  if (finding_lines) {
    LineBuilder b{width};
    b.add("Findings", TopAttr::kHeader);
    if (hidden_info) b.add("  (" + std::to_string(hidden_info) + " info hidden: i shows)", TopAttr::kDim);
    out.push_back(b.done());
    for (size_t i = 0; i < shown.size() && i + 1 < finding_lines; ++i) {
      const ShownFinding& f = *shown[i];
      bool last_room = i + 2 == finding_lines && shown.size() > i + 1;
      LineBuilder l{width};
      if (last_room) {
        l.add("  ... " + std::to_string(shown.size() - i) + " more (Enter on a process shows its own)", TopAttr::kDim);
      } else if (!height) {  // --once: the whole text, wrapped (a bug report keeps every word)
        std::string head = "[" + std::string(severity_name(f.severity)) + "] ";
        std::string text = wrap(head + "GPU " + std::to_string(f.gpu) + " " + f.id + " (pid " + pid_list(f.pids) +
                                    "): " + printable(f.message),
                                width, 2, 6);
        for (size_t at = 0; at <= text.size();) {
          size_t nl = text.find('\n', at);
          std::string piece = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
          if (at == 0 && piece.size() >= 2 + head.size())
            out.push_back(LineBuilder{width}.add("  ").add(head, severity_attr(f.severity)).add(piece.substr(2 + head.size())).done());
          else
            out.push_back(LineBuilder{width}.add(piece).done());
          if (nl == std::string::npos) break;
          at = nl + 1;
        }
        if (!f.fix.empty()) out.push_back(LineBuilder{width + f.fix.size()}.add("      fix: " + printable(f.fix), TopAttr::kBold).done());
        continue;
      } else {
        l.add("  [" + std::string(severity_name(f.severity)) + "] ", severity_attr(f.severity))
            .add("GPU " + std::to_string(f.gpu) + " " + f.id + " (pid " + pid_list(f.pids) + "): ")
            .add(printable(f.message), TopAttr::kDim);
      }
      out.push_back(l.done());
      if (last_room) break;
    }
  }
  if (height) {
    LineBuilder b{width};
    if (view.prompt == TopView::Prompt::kFilter) {
      b.add("filter: ", TopAttr::kBold).add(printable(view.typed) + "_").add("  (Enter applies, Esc clears)", TopAttr::kDim);
    } else if (view.prompt == TopView::Prompt::kSignal) {
      b.add("send signal " + std::to_string(view.signal) + " to pid " + std::to_string(view.signal_pid) + "? ",
            TopAttr::kWarn)
          .add("y yes, n no; 1 HUP 2 INT 9 KILL 15 TERM choose", TopAttr::kDim);
    } else if (!view.message.empty()) {
      b.add(printable(view.message), TopAttr::kInfo);
    } else {
      b.add("q quit  h help  Enter detail  <> sort  / filter  t tree  i info  k signal", TopAttr::kDim);
      if (!view.filter.empty()) b.add("  filter: " + printable(view.filter), TopAttr::kWarn);
    }
    while (out.size() + 1 < height) out.push_back({});
    out.resize(height - 1);
    out.push_back(b.done());
  }
  return out;
}

}  // namespace

std::vector<TopLine> render_top(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                const TopStatus& status, size_t width, size_t height) {
  std::vector<TopLine> lines = render_screen(frame, history, view, status, std::max<size_t>(width, 20), height);
  if (!view.utf8) asciify(lines);
  return lines;
}

std::string top_text(const std::vector<TopLine>& lines, bool color) {
  std::string out;
  for (const TopLine& l : lines) {
    std::string line;
    for (const TopSpan& s : l) {
      const char* code = nullptr;
      if (color) switch (s.attr) {
          case TopAttr::kBold: code = "1"; break;
          case TopAttr::kDim: code = "2"; break;
          case TopAttr::kHeader: code = "1;4"; break;
          case TopAttr::kSelected: code = "7"; break;
          case TopAttr::kGood: code = "32"; break;
          case TopAttr::kWarn: code = "33"; break;
          case TopAttr::kBad: code = "31"; break;
          case TopAttr::kInfo: code = "36"; break;
          case TopAttr::kNormal: break;
        }
      if (code) line += std::string("\033[") + code + "m" + s.text + "\033[0m";
      else line += s.text;
    }
    if (!color)
      while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace gpumap
