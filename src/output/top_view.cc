#include "output/top_view.h"

#include <algorithm>
#include <cctype>
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
#include "model/lease.h"
#include "model/text.h"
#include "output/style.h"
#include "output/top_keymap.h"


namespace gpumap {

bool top_auto_compact(size_t gpus, size_t height) { return height && 3 * gpus * 3 > height; }

namespace {

// --- findings, each once per GPU ---------------------------------------------------------------

struct ShownFinding {
  Severity severity;
  std::string id;
  uint32_t gpu = 0;
  std::vector<uint32_t> pids;
  std::string message, fix;
};

/// The findings of the rows the filter keeps, as `ps --user/--gpu/--pid` keeps them: each row's
/// own, and the GPU findings a kept row refers to.
std::vector<ShownFinding> shown_findings(const PsResult& ps, const std::string& filter) {
  std::vector<ShownFinding> out;
  std::map<std::pair<std::string, uint32_t>, size_t> at;
  std::set<size_t> gpu_findings;
  for (const ProcessRow& r : ps.rows) {
    if (!top_row_matches(r, filter)) continue;
    gpu_findings.insert(r.gpu_findings.begin(), r.gpu_findings.end());
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
  }
  for (size_t i = 0; i < ps.gpu_findings.size(); ++i) {
    const GpuFinding& g = ps.gpu_findings[i];
    if (filter.empty() || gpu_findings.count(i))
      out.push_back({g.finding.severity, g.finding.id, g.nvml_index, g.pids, g.finding.message, g.finding.fix});
  }
  std::stable_sort(out.begin(), out.end(), [](const ShownFinding& a, const ShownFinding& b) {
    return std::make_tuple(-static_cast<int>(a.severity), a.gpu) < std::make_tuple(-static_cast<int>(b.severity), b.gpu);
  });
  return out;
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
    std::string pid = std::to_string(view.signal_pid);
    if (!view.signal)
      spans = {{"signal pid " + pid + ": ", TopAttr::kWarn},
               {"t TERM  k KILL  h HUP  i INT  (any other key cancels)", TopAttr::kDim}};
    else
      spans = {{"send " + signal_word(view.signal) + " to pid " + pid + "? ", TopAttr::kWarn},
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

/// The findings, each once per GPU, in `lines` lines (the header and "... N more" included):
/// the first line of each, cut at the edge; with no height (--once) each whole, wrapped, with its
/// fix.  The full text and fixes of one process are in the detail view.
void add_findings(std::vector<TopLine>& out, const std::vector<const ShownFinding*>& shown, size_t hidden_info,
                  size_t finding_lines, size_t height, size_t width) {
  if (!finding_lines) return;
  LineBuilder b{width};
  b.add("Findings", TopAttr::kHeader);
  if (hidden_info)
    b.add("  (" + std::to_string(hidden_info) + " info hidden: " + (height ? "i shows" : "--all shows") + ")",
          TopAttr::kDim);
  out.push_back(b.done());
  for (size_t i = 0; i < shown.size() && i + 1 < finding_lines; ++i) {
    const ShownFinding& f = *shown[i];
    bool last_room = i + 2 == finding_lines && shown.size() > i + 1;
    LineBuilder l{width};
    if (last_room) {
      l.words("  ... " + std::to_string(shown.size() - i) + " more (Enter on a process shows its own)", TopAttr::kDim);
    } else if (!height) {  // --once: the whole text, wrapped (a bug report keeps every word)
      std::string head = "[" + std::string(severity_name(f.severity)) + "] ";
      std::string text = wrap(head + "GPU " + std::to_string(f.gpu) + " " + f.id + " (pid " + pid_list(f.pids) +
                                  "): " + printable(f.message),
                              width, 2, 6);
      for (size_t at = 0; at <= text.size();) {
        size_t nl = text.find('\n', at);
        std::string piece = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        if (at == 0 && piece.size() >= 2 + head.size())
          out.push_back(LineBuilder{width}.add("  ").add(head, top_severity_attr(f.severity)).add(piece.substr(2 + head.size())).done());
        else
          out.push_back(LineBuilder{width}.add(piece).done());
        if (nl == std::string::npos) break;
        at = nl + 1;
      }
      if (!f.fix.empty()) out.push_back(LineBuilder{width + f.fix.size()}.add("      fix: " + printable(f.fix), TopAttr::kBold).done());
      continue;
    } else {
      l.add("  [" + std::string(severity_name(f.severity)) + "] ", top_severity_attr(f.severity))
          .add("GPU " + std::to_string(f.gpu) + " " + f.id + " (pid " + pid_list(f.pids) + "): ");
      l.add(top_cut_at_word(printable(f.message), l.width > l.used ? l.width - l.used : 0), TopAttr::kDim);  // at a word
    }
    out.push_back(l.done());
    if (last_room) break;
  }
}

std::vector<TopLine> render_screen(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                   const TopStatus& status, size_t width, size_t height) {
  std::vector<TopLine> out = head_lines(frame, view, status, width);
  const Snapshot* s = frame.snapshot.get();
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
    finish_frame(out, height, LineBuilder{width}.add("Esc/q back  Up/Down scroll  Left/Right shift  k signal", TopAttr::kDim).done());
    return out;
  }

  std::vector<TopRow> rows = top_rows(frame, view);
  std::vector<ShownFinding> findings = shown_findings(frame.ps.result, view.filter);
  size_t hidden_info = 0;
  std::vector<const ShownFinding*> shown;
  for (const ShownFinding& f : findings) {
    if (f.severity == Severity::kInfo && !view.show_info) ++hidden_info;
    else shown.push_back(&f);
  }
  size_t ngpu = s ? s->gpus.size() : 0;
  size_t finding_lines = shown.size() + (hidden_info || !shown.empty() ? 1 : 0);
  int per_gpu = height ? 3 : 2;  // --once: one sample is no history
  // Compact: one line per GPU, when the full blocks would take more than about a third of the
  // screen (eight GPUs at 40 lines), or the other way when c says so.
  if (height && top_auto_compact(ngpu, height) != view.compact_toggled) per_gpu = 1;
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
  Layout w = column_layout(width, rows, frame, view);
  out.push_back(table_header(w, view, width));
  size_t first = std::min(view.scroll, rows.size());
  for (size_t i = first; i < rows.size() && i - first < table_room; ++i)
    out.push_back(table_line(rows[i], frame, w, view, height && i == view.selected, width));
  if (rows.empty())
    out.push_back(LineBuilder{width}
                      .add(view.filter.empty() ? "  no GPU processes" : "  no process matches " + printable(view.filter),
                           TopAttr::kDim)
                      .done());
  pad_frame(out, height, finding_lines + 1);
  add_findings(out, shown, hidden_info, finding_lines, height, width);
  finish_frame(out, height, footer(view, width));
  return out;
}

}  // namespace

std::vector<TopLine> render_top(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                const TopStatus& status, size_t width, size_t height) {
  std::vector<TopLine> lines = render_screen(frame, history, view, status, std::max<size_t>(width, 20), height);
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
