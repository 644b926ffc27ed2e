#include "output/top_view.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <unordered_set>
#include <unordered_map>
#include <tuple>

#include "findings/severity.h"
#include "model/env_vars.h"
#include "model/lease.h"
#include "model/text.h"
#include "output/style.h"
#include "output/top_keymap.h"
#include "output/top_panels.h"

namespace gpumap {

bool top_auto_compact(size_t gpus, size_t height) { return height && 3 * gpus * 3 > height; }

namespace {

// --- findings ----------------------------------------------------------------------------------

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

// --- lines ---------------------------------------------------------------------------------------

using LineBuilder = TopLineBuilder;

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

/// What nvitop shows beside the bars, where the line has room: memory-bandwidth utilisation (the
/// share of time memory was read or written), fan, performance state, volatile ECC errors
/// (corrected/uncorrected).  "" when the driver said none of them.
std::string gpu_extras(const Gpu& g) {
  std::string s;
  auto add = [&](const std::string& t) { s += (s.empty() ? "" : "  ") + t; };
  if (g.utilization_memory) add("MBW " + std::to_string(*g.utilization_memory) + "%");
  if (g.fan_speed_percent) add("fan " + std::to_string(*g.fan_speed_percent) + "%");
  if (g.performance_state) add("P" + std::to_string(*g.performance_state));
  if (g.ecc_corrected_volatile || g.ecc_uncorrected_volatile)
    add("ECC " + (g.ecc_corrected_volatile ? std::to_string(*g.ecc_corrected_volatile) : std::string("?")) + "/" +
        (g.ecc_uncorrected_volatile ? std::to_string(*g.ecc_uncorrected_volatile) : std::string("?")));
  return s;
}

/// `text` added to `b` only when it fits whole (never cut: a number cut in two misleads).
void add_if_room(TopLineBuilder& b, const std::string& text, TopAttr a) {
  if (b.used + display_width(text) <= b.width) b.add(text, a);
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
    return b.add(top_fit(std::to_string(g.nvml_index), 2, true) + " ", TopAttr::kBold)
        .add(top_fit(cuda, 7) + " ", here == f.cuda_here.end() ? TopAttr::kDim : TopAttr::kBold);
  };
  auto load = [&](LineBuilder& b, size_t bar, size_t number) {
    b.add("UTIL")
        .add(top_bar(g.utilization_gpu, bar, v.utf8), level(g.utilization_gpu))
        .add(top_fit(util_num, number, true) + "  ")
        .add("MEM")
        .add(top_bar(mem_pct, bar, v.utf8), level(mem_pct))
        .add(" " + mem_num);
  };
  if (lines_per_gpu == 1) {  // "0 cuda:1 H200  UTIL[||||  ] 45%  MEM[|||   ] 40960/143771MiB"
    size_t fixed = 3 + 8 + 14 + 6 + 5 + 5 + 18;
    LineBuilder one{width};
    index_and_cuda(one).add(top_fit(gpu_label(g), 13) + " ");
    load(one, width > fixed ? std::min<size_t>((width - fixed) / 2, 20) : 2, 4);
    if (std::string x = gpu_extras(g); !x.empty()) add_if_room(one, "  " + x, TopAttr::kDim);
    out.push_back(one.done());
    return;
  }
  LineBuilder head{width};
  index_and_cuda(head).add(gpu_label(g) + "  ").add(short_uuid(g.uuid), TopAttr::kDim);
  if (std::string s = sensors(g); !s.empty()) head.add("  " + s);
  std::string holders = gpu_holders(g, f);
  if (!holders.empty()) head.add("  " + printable(holders), TopAttr::kInfo);
  if (std::string x = gpu_extras(g); !x.empty()) add_if_room(head, "  " + x, TopAttr::kDim);
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

/// The columns shown at `width` cells and their widths, in order: the command takes what is
/// left; when that is under 12 cells, columns with a drop order go, those with no value in any
/// row first, then highest drop order first (the sort column never goes).
using Layout = std::vector<std::pair<const TopColumnSpec*, size_t>>;
Layout column_layout(size_t width, const std::vector<TopRow>& rows, const TopFrame& f, const TopView& v) {
  Layout w;
  for (const TopColumnSpec& c : top_columns()) w.push_back({&c, c.width});
  auto longest = [&](const TopColumnSpec& c) {
    size_t n = 0;
    for (const TopRow& r : rows)
      if (r.row) n = std::max(n, display_width(c.value(*r.row, top_host_use(*r.row, f))));
    return n;
  };
  auto used = [&]() {
    size_t n = 0;
    for (const auto& [c, cells] : w)
      if (c->id != TopColumn::kCommand) n += cells + 1;
    return n;
  };
  // The CUDA column is what top is for: it always fits its longest value ("cuda:12*"), at the
  // command's cost.
  for (auto& [c, cells] : w) {
    if (c->id == TopColumn::kCuda) cells = std::max(cells, std::min(longest(*c), size_t{10}));
    if (c->id == v.sort && c->id != TopColumn::kCommand) cells = std::max(cells, display_width(c->header) + 1);  // its arrow
  }
  auto empty = [&](const TopColumnSpec& c) {
    for (const TopRow& r : rows)
      if (r.row && c.value(*r.row, top_host_use(*r.row, f)) != "-") return false;
    return true;
  };
  // First columns with no value in any row give way while the command is cut; then, while it
  // would get fewer than 16 cells, the others with a drop order.
  size_t whole_command = 0;
  for (const TopRow& r : rows)
    if (r.row) whole_command = std::max(whole_command, display_width(printable(r.row->command.value_or("?"))) + 3 * r.depth);
  for (int pass = 0; pass < 2; ++pass)
    while (used() + (pass ? size_t{16} : std::min<size_t>(whole_command, 60)) > width) {
      auto drop = w.end();
      for (auto it = w.begin(); it != w.end(); ++it)
        if (it->first->drop && it->first->id != v.sort && (pass || empty(*it->first)) &&
            (drop == w.end() || it->first->drop > drop->first->drop))
          drop = it;
      if (drop == w.end()) break;
      w.erase(drop);
    }
  // Wider terminals: the user and job columns grow to their longest value (up to a limit) first.
  size_t spare = width > used() + 24 ? width - used() - 24 : 0;
  for (auto& [c, cells] : w) {
    if (c->id != TopColumn::kUser && c->id != TopColumn::kJob) continue;
    size_t l = longest(*c);
    size_t grow = std::min({spare, l > cells ? l - cells : 0, size_t{16}});
    cells += grow;
    spare -= grow;
  }
  size_t before_command = used();
  for (auto& [c, cells] : w)
    if (c->id == TopColumn::kCommand) cells = width > before_command ? width - before_command : 1;
  return w;
}

TopLine table_header(const Layout& w, const TopView& v, size_t width) {
  LineBuilder b{width};
  for (const auto& [c, cells] : w) {
    std::string name = c->header;
    bool down = c->largest_first != v.reverse;  // the arrow points the way values go down the table
    if (c->id == v.sort) name += down ? (v.utf8 ? "▼" : "v") : (v.utf8 ? "▲" : "^");
    if (c->id == TopColumn::kCommand && v.command_hscroll) name += " +" + std::to_string(v.command_hscroll);
    b.add(top_fit(name, cells, c->right) + (c->id == TopColumn::kCommand ? "" : " "), TopAttr::kHeader);
  }
  return b.done();
}

TopLine table_line(const TopRow& tr, const TopFrame& f, const Layout& w, const TopView& v, bool selected,
                   size_t width) {
  LineBuilder b{width};
  if (!tr.row) {  // a parent that is not a GPU process
    std::string cmd = "?";
    if (auto it = f.parents.find(tr.parent_pid); it != f.parents.end()) cmd = printable(it->second);
    size_t before_command = 0, pid_cells = 7;
    for (const auto& [c, cells] : w) {
      if (c->id == TopColumn::kPid) pid_cells = cells;
      else if (c->id != TopColumn::kCommand) before_command += cells + 1;
    }
    b.add(top_fit(std::to_string(tr.parent_pid), pid_cells, true) + " ", TopAttr::kDim)
        .add(std::string(before_command, ' '))
        .add(cmd, selected ? TopAttr::kSelected : TopAttr::kDim);
    return b.done();
  }
  const ProcessRow& r = *tr.row;
  const ProcessHostUse* use = top_host_use(r, f);
  // (a plain Severity and a flag: GCC 12 at -O2 warns maybe-uninitialized on the optional's value)
  const std::optional<Severity> found = worst_for(r, f.ps.result);
  const bool coloured = found.has_value() && (*found != Severity::kInfo || v.show_info);
  const Severity worst = coloured ? *found : Severity::kInfo;
  for (const auto& [c, cells] : w) {
    std::string text = c->value(r, use);
    if (c->id == TopColumn::kCommand && tr.depth > 0)
      text = std::string(2 * (tr.depth - 1), ' ') + (v.utf8 ? "└─ " : "`- ") + text;
    if (c->id == TopColumn::kCommand) text = top_skip_cells(text, v.command_hscroll);  // Left/Right
    if (c->id == TopColumn::kPid && r.local_pid && v.tagged.count(*r.local_pid)) text = "*" + text;  // m
    TopAttr a = selected ? TopAttr::kSelected : TopAttr::kNormal;
    if (!selected && c->id == TopColumn::kCuda && coloured) a = top_severity_attr(worst);
    if (!selected && r.state == ProcessState::kExited) a = TopAttr::kDim;
    b.add(top_fit(text, cells, c->right) + (c->id == TopColumn::kCommand ? "" : " "), a);
  }
  return b.done();
}

std::vector<TopLine> help_lines(size_t width) {
  std::vector<TopLine> out = key_help_lines("gpumap top: keys", key_help(top_keymap()), width);
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


namespace {

/// The detail screen's lines (not yet cut to the screen: the caller scrolls them).
std::vector<TopLine> detail_lines(const TopFrame& f, const TopHistory& h, const TopView& v, size_t width) {
  std::vector<TopLine> d = process_detail(f.snapshot.get(), f.ps.result, v.detail_pid, width);
  auto it = h.processes.find(v.detail_pid);
  if (it == h.processes.end() || d.size() < 2) return d;
  // Its history over the session, after its pid and command: a sparkline and the last value each.
  const TopHistory::ProcessSeries& s = it->second;
  auto series = [&](const char* name, const std::deque<float>& values, double floor, const char* unit) {
    double top = floor;
    for (float x : values)
      if (!std::isnan(x)) top = std::max(top, static_cast<double>(x));
    std::deque<uint8_t> levels;
    for (float x : values) levels.push_back(std::isnan(x) ? 255 : static_cast<uint8_t>(std::min(100.0, x * 100 / top)));
    std::string last = "-";
    if (!values.empty() && !std::isnan(values.back())) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f%s", static_cast<double>(values.back()), unit);
      last = buf;
    }
    size_t spark = width > 50 ? std::min<size_t>(width - 50, 60) : 10;  // the last minute at 1 s
    return LineBuilder{width}
        .add(top_fit(std::string("  ") + name, 10), TopAttr::kDim)
        .add(top_sparkline(levels, spark, v.utf8), TopAttr::kGood)
        .add(" " + last + "  (max " + std::to_string(static_cast<long long>(top)) + unit + ")", TopAttr::kDim)
        .done();
  };
  std::vector<TopLine> block = {LineBuilder{width}.add("History (this session, one sample a read)", TopAttr::kHeader).done(),
                                series("GPU mem", s.gpu_memory_mib, 1, "MiB"), series("SM %", s.sm_percent, 100, "%"),
                                series("CPU %", s.cpu_percent, 100, "%"), series("RSS", s.rss_mib, 1, "MiB"), {}};
  d.insert(d.begin() + 2, block.begin(), block.end());
  return d;
}

/// The environment screen: the variables gpumap reads first, marked, then the rest by name.
std::vector<TopLine> environ_lines(const TopFrame& f, const TopView& v) {
  const size_t wide = 100000;  // cut when drawn (Left/Right shift)
  std::vector<TopLine> out;
  std::string cmd = "?";
  for (const ProcessRow& r : f.ps.result.rows)
    if (r.pid == v.detail_pid) cmd = printable(r.command.value_or("?"));
  out.push_back(LineBuilder{wide}
                    .add("Environment of pid " + std::to_string(v.detail_pid), TopAttr::kBold)
                    .add("  " + cmd + "  (" + std::to_string(v.environ.size()) + " variables; * read by gpumap)", TopAttr::kDim)
                    .done());
  if (!v.environ_note.empty()) out.push_back(LineBuilder{wide}.add("  " + v.environ_note, TopAttr::kWarn).done());
  std::vector<std::string> gpu, rest;
  for (const std::string& kv : v.environ) {
    std::string name = kv.substr(0, kv.find('='));
    bool read = std::any_of(std::begin(kEnvVars), std::end(kEnvVars),
                            [&](const EnvVarInfo& e) { return (e.readers & kEnvReasoned) && name == e.name; });
    (read ? gpu : rest).push_back(kv);
  }
  std::sort(gpu.begin(), gpu.end());
  std::sort(rest.begin(), rest.end());
  for (const std::string& kv : gpu) out.push_back(LineBuilder{wide}.add("* ", TopAttr::kWarn).add(printable(kv), TopAttr::kBold).done());
  for (const std::string& kv : rest) out.push_back(LineBuilder{wide}.add("  " + printable(kv)).done());
  return out;
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
    b.add(top_skip_cells(s.text, skip), s.attr);
    skip = 0;
  }
  return b.done();
}

}  // namespace


namespace {

/// A signal's name as kill(1) spells it: "TERM", "KILL".
std::string signal_word(int sig) {
  switch (sig) {
    case SIGTERM: return "TERM";
    case SIGKILL: return "KILL";
    case SIGHUP: return "HUP";
    case SIGINT: return "INT";
    default: return "signal " + std::to_string(sig);
  }
}

/// The footer: a prompt, the last action's outcome, else the keys; the active filter always
/// (output/screen_kit.h's footer_line).
TopLine footer(const TopView& view, size_t width) {
  std::vector<TopSpan> spans;
  if (view.prompt == TopView::Prompt::kFilter) {
    spans = filter_prompt_spans(view.typed);
  } else if (view.prompt == TopView::Prompt::kSignal) {
    std::string pid = view.signal_pid ? "pid " + std::to_string(view.signal_pid)
                                      : std::to_string(view.tagged.size()) + " tagged processes";
    if (!view.signal)
      spans = {{"signal " + pid + ": ", TopAttr::kWarn},
               {"t TERM  k KILL  h HUP  i INT  (any other key cancels)", TopAttr::kDim}};
    else
      spans = {{"send " + signal_word(view.signal) + " to " + pid + "? ", TopAttr::kWarn},
               {"y sends it, any other key cancels", TopAttr::kDim}};
  } else if (!view.message.empty()) {
    spans = {{printable(view.message), TopAttr::kInfo}};
  } else {
    spans = {{"q quit  h help  Enter detail  <> sort  / filter  t tree  c GPU lines  i info  k signal", TopAttr::kDim}};
  }
  return footer_line(spans, view.prompt == TopView::Prompt::kFilter ? "" : view.filter, width);
}

/// The title (host, driver, CUDA, simulated, refresh, time) and the status line (a failed or
/// hanging read, else what `cuda:N` means here).
std::vector<TopLine> head_lines(const TopFrame& frame, const TopView& view, const TopStatus& status, size_t width) {
  std::vector<TopLine> out;
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
    b.add("  every " + top_seconds_text(view.interval_s));
    if (view.paused) b.add("  PAUSED", TopAttr::kWarn);
    if (status.now_unix_ms) b.add("  " + top_clock_text(status.now_unix_ms));
    out.push_back(b.done());
  }
  // Status: a failed or hanging read, else what `cuda:N` means here.
  {
    LineBuilder b{width};
    int64_t age_ms = frame.read_unix_ms ? status.now_unix_ms - frame.read_unix_ms : 0;
    bool stale = frame.read_unix_ms && status.reading &&
                 status.now_unix_ms - status.reading_since_ms > static_cast<int64_t>(view.interval_s * 2000) + 2000;
    if (!frame.error.empty()) b.words("read failed: " + printable(frame.error), TopAttr::kBad);
    else if (stale)
      b.words("STALE: the driver has not answered for " +
                std::to_string((status.now_unix_ms - status.reading_since_ms) / 1000) + "s; showing the read of " +
                std::to_string(age_ms / 1000) + "s ago",
            TopAttr::kBad);
    else if (!s && status.reading) b.add("reading the GPUs...", TopAttr::kDim);
    else if (!frame.cuda_here_error.empty())
      b.words("this shell's CUDA_VISIBLE_DEVICES breaks CUDA: " + printable(frame.cuda_here_error), TopAttr::kWarn);
    else if (s)
      b.words(std::to_string(s->gpus.size()) + " GPUs, " + std::to_string(frame.ps.result.rows.size()) +
                " GPU processes; cuda:N after the index is this shell's",
            TopAttr::kDim);
    out.push_back(b.done());
  }
  return out;
}

/// What the signal prompt is about: the process's pid, user and command, above the footer.
TopLine signal_target_line(const TopFrame& frame, const TopView& view, size_t width) {
  if (!view.signal_pid) {  // the tagged ones
    std::string all;
    for (const auto& [pid, start] : view.tagged) {
      std::string cmd = "?";
      for (const ProcessRow& r : frame.ps.result.rows)
        if (r.local_pid && *r.local_pid == pid) cmd = printable(r.user.value_or("?")) + " " + printable(r.command.value_or("?"));
      all += (all.empty() ? "" : ", ") + std::string("pid ") + std::to_string(pid) + " (" + cmd + ")";
    }
    return LineBuilder{width}.add("  tagged: ", TopAttr::kWarn).add(all, TopAttr::kBold).done();
  }
  const ProcessRow* row = nullptr;
  for (const ProcessRow& r : frame.ps.result.rows)
    if (r.local_pid && *r.local_pid == view.signal_pid) row = &r;
  std::string who = "pid " + std::to_string(view.signal_pid);
  if (!row) return LineBuilder{width}.add("  " + who + ": no longer a GPU process", TopAttr::kWarn).done();
  return LineBuilder{width}
      .add("  " + who + "  user " + printable(row->user.value_or("?")) + "  ", TopAttr::kWarn)
      .add(printable(row->command.value_or("?")), TopAttr::kBold)
      .done();
}

/// How the main screen's height is shared: lines per GPU (3: bars and history; 1: compact), the
/// process table's rows and the findings' lines, below `above` lines of head and host panel.
struct Rooms {
  int per_gpu;
  size_t table;
  size_t findings;
};
Rooms rooms(size_t above, size_t ngpu, size_t nrows, size_t finding_lines, const TopView& view, size_t height) {
  int per_gpu = height ? 3 : 2;  // --once: one sample is no history
  // Compact: one line per GPU, when the full blocks would take more than about a third of the
  // screen (eight GPUs at 40 lines), or the other way when c says so.
  if (height && top_auto_compact(ngpu, height) != view.compact_toggled) per_gpu = 1;
  if (!height) return {per_gpu, nrows, finding_lines};
  size_t findings_room = std::min<size_t>(finding_lines, 4);
  size_t fixed = above + 1 /*table header*/ + findings_room + 1 /*footer*/;
  size_t min_rows = std::min<size_t>(std::max<size_t>(nrows, 1), 5);
  while (per_gpu > 1 && fixed + per_gpu * ngpu + min_rows > height) --per_gpu;
  size_t used = fixed + per_gpu * ngpu;
  size_t table_room = height > used ? height - used : 0;
  if (table_room > nrows) {  // room to spare: more findings
    size_t extra = std::min(table_room - nrows, finding_lines - findings_room);
    findings_room += extra;
    table_room -= extra;
  }
  return {per_gpu, table_room, findings_room};
}

std::vector<TopLine> render_screen(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                   const TopStatus& status, size_t width, size_t height, TableWindow* window) {
  std::vector<TopLine> out = head_lines(frame, view, status, width);
  const Snapshot* s = frame.snapshot.get();
  if (view.screen == TopView::Screen::kHelp) {
    for (TopLine& l : help_lines(width)) out.push_back(std::move(l));
    if (height && out.size() > height) out.resize(height);
    return out;
  }
  if (view.screen == TopView::Screen::kEnviron) {
    std::vector<TopLine> d = environ_lines(frame, view);
    size_t room = height ? (height > out.size() + 1 ? height - out.size() - 1 : 0) : d.size();
    size_t first = std::min(view.detail_scroll, d.size());
    for (size_t i = first; i < d.size() && i - first < room; ++i) out.push_back(shifted(d[i], view.detail_hscroll, width));
    finish_frame(out, height, LineBuilder{width}.add("Esc/q back  Up/Down scroll  Left/Right shift", TopAttr::kDim).done());
    return out;
  }
  if (view.screen == TopView::Screen::kDetail) {
    std::vector<TopLine> d = detail_lines(frame, history, view, width);
    size_t room = height ? (height > out.size() + 1 ? height - out.size() - 1 : 0) : d.size();
    size_t first = std::min(view.detail_scroll, d.size());
    for (size_t i = first; i < d.size() && i - first < room; ++i) out.push_back(shifted(d[i], view.detail_hscroll, width));
    finish_frame(out, height, LineBuilder{width}.add("Esc/q back  Up/Down scroll  Left/Right shift  k signal", TopAttr::kDim).done());
    return out;
  }

  top_host_panel_lines(out, frame.host, view, width, height);
  std::vector<TopRow> rows = top_rows(frame, view);
  std::vector<TopShownFinding> findings = top_shown_findings(frame.ps.result, view.filter);
  size_t hidden_info = 0;
  std::vector<const TopShownFinding*> shown;
  for (const TopShownFinding& f : findings) {
    if (f.severity == Severity::kInfo && !view.show_info) ++hidden_info;
    else shown.push_back(&f);
  }
  Rooms room = rooms(out.size(), s ? s->gpus.size() : 0, rows.size(),
                     shown.size() + (hidden_info || !shown.empty() ? 1 : 0), view, height);
  size_t table_room = room.table, finding_lines = room.findings;
  if (s)
    for (const Gpu& g : s->gpus) gpu_lines(out, g, frame, history, view, width, room.per_gpu);
  Layout w = column_layout(width, rows, frame, view);
  out.push_back(table_header(w, view, width));
  // The window: the selection always in it, and a line for the rows above and below it.
  TableWindow win = height ? table_window(rows.size(), view.selected, view.scroll, table_room)
                           : TableWindow{0, rows.size(), view.selected};
  win.top_line = out.size();
  for (size_t i = win.first; i < win.first + win.shown; ++i)
    out.push_back(table_line(rows[i], frame, w, view, height && i == win.selected, width));
  if (win.more_line) out.push_back(more_rows_line(win, view.utf8, width));
  if (window) *window = win;
  if (rows.empty())
    out.push_back(LineBuilder{width}
                      .add(view.filter.empty() ? "  no GPU processes" : "  no process matches " + printable(view.filter),
                           TopAttr::kDim)
                      .done());
  pad_frame(out, height, finding_lines + 1);
  top_findings_lines(out, shown, hidden_info, finding_lines, height, width);
  if (height > 2 && view.prompt == TopView::Prompt::kSignal) {  // the confirmation says whom
    pad_frame(out, height, 1);
    out.resize(height - 1);
    out.back() = signal_target_line(frame, view, width);
  }
  finish_frame(out, height, footer(view, width));
  return out;
}

}  // namespace

std::vector<TopLine> render_top(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                const TopStatus& status, size_t width, size_t height, TableWindow* window) {
  std::vector<TopLine> lines = render_screen(frame, history, view, status, std::max<size_t>(width, 20), height, window);
  if (!view.utf8) top_asciify(lines);
  return lines;
}


std::vector<TopLine> top_too_small(size_t width, size_t height) {
  std::string text = "gpumap top needs at least 80x24; this terminal is " + std::to_string(width) + "x" +
                     std::to_string(height) + " (q quits)";
  std::vector<TopLine> out;
  for (const std::string& line : split(wrap(text, std::max<size_t>(width, 1), 0, 0), '\n'))
    out.push_back({{display_width(line) > width ? ellipsize(line, width) : line, TopAttr::kWarn}});
  return out;
}

}  // namespace gpumap
