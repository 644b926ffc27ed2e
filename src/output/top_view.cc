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

namespace gpumap {

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

/// `text` cut to at most `cells` columns at a word: the words that fit and "…" (ellipsize when
/// not even the first word fits).
std::string cut_at_word(const std::string& text, size_t cells) {
  if (display_width(text) <= cells) return text;
  if (cells == 0) return "";
  std::string t = ellipsize(text, cells);
  size_t space = t.find_last_of(' ', t.size() - 1);
  while (space != std::string::npos && space > 0 && t[space - 1] == ' ') --space;
  if (space == std::string::npos || space == 0) return t;
  return t.substr(0, space) + "…";
}

// --- the table's cells ---------------------------------------------------------------------------

/// CPU % as top shows it: one decimal under 100, whole numbers above (16 busy cores: "1600").
std::string cpu_text(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, pct < 99.95 ? "%.1f" : "%.0f", pct);
  return buf;
}

/// Resident memory in at most five cells: "512K", "2047M", "12.5G", "130G".
std::string rss_text(uint64_t kib) {
  char buf[32];
  if (kib < 1024) std::snprintf(buf, sizeof buf, "%lluK", static_cast<unsigned long long>(kib));
  else if (kib < 10000 * 1024ull) std::snprintf(buf, sizeof buf, "%lluM", static_cast<unsigned long long>(kib / 1024));
  else if (kib < 100ull * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1fG", static_cast<double>(kib) / (1024.0 * 1024));
  else std::snprintf(buf, sizeof buf, "%lluG", static_cast<unsigned long long>(kib / (1024 * 1024)));
  return buf;
}

/// Elapsed time as nvitop and ps show it: "MM:SS", "H:MM:SS", then "Nd HHh".
std::string elapsed_text(int64_t s) {
  char buf[32];
  if (s < 3600) std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else if (s < 86400)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  else std::snprintf(buf, sizeof buf, "%lldd %02lldh", static_cast<long long>(s / 86400), static_cast<long long>(s / 3600 % 24));
  return buf;
}

std::string cuda_cell(const ProcessRow& r) {
  if (r.state == ProcessState::kExited) return "exited";
  if (r.state == ProcessState::kNotVisible || !r.environ_known) return "?";
  if (r.cuda_error) return "error";
  if (!r.cuda_ordinal) return "none";
  return "cuda:" + std::to_string(*r.cuda_ordinal) + (r.container_renumbers ? "*" : "");
}

template <typename T>
TopSortKey key_of(const std::optional<T>& v) {
  return v ? TopSortKey{true, static_cast<double>(*v)} : TopSortKey{false, 0};
}

// The columns.  A row: id, header, word, width, right-aligned, largest first, drop order, cell,
// sort key (null: by the cell's text), filter (null: none).
const std::vector<TopColumnSpec> kColumns = {
    {TopColumn::kPid, "PID", "pid", 7, true, false, 0,
     [](const ProcessRow& r, const ProcessHostUse*) { return std::to_string(r.pid); },
     [](const ProcessRow& r, const ProcessHostUse*) { return TopSortKey{true, static_cast<double>(r.pid)}; },
     [](const ProcessRow& r, const std::string& v) {
       return std::to_string(r.pid) == v || (r.local_pid && std::to_string(*r.local_pid) == v);
     }},
    {TopColumn::kUser, "USER", "user", 8, false, false, 0,
     [](const ProcessRow& r, const ProcessHostUse*) { return printable(r.user.value_or("?")); }, nullptr,
     [](const ProcessRow& r, const std::string& v) { return r.user == v || (r.uid && std::to_string(*r.uid) == v); }},
    {TopColumn::kGpu, "GPU", "gpu", 4, true, false, 0,
     [](const ProcessRow& r, const ProcessHostUse*) { return std::to_string(r.nvml_index); },
     [](const ProcessRow& r, const ProcessHostUse*) { return TopSortKey{true, static_cast<double>(r.nvml_index)}; },
     [](const ProcessRow& r, const std::string& v) {
       return all_digits(v) ? std::to_string(r.nvml_index) == v : lower(r.uuid).rfind(lower(v), 0) == 0;
     }},
    {TopColumn::kCuda, "CUDA", "cuda", 6, false, false, 0,
     [](const ProcessRow& r, const ProcessHostUse*) { return cuda_cell(r); },
     [](const ProcessRow& r, const ProcessHostUse*) { return key_of(r.cuda_ordinal); }, nullptr},
    {TopColumn::kMemory, "MEM", "mem", 9, true, true, 0,
     [](const ProcessRow& r, const ProcessHostUse*) {
       return r.used_memory_mib ? std::to_string(*r.used_memory_mib) + "MiB" : std::string("-");
     },
     [](const ProcessRow& r, const ProcessHostUse*) { return key_of(r.used_memory_mib); }, nullptr},
    {TopColumn::kUtil, "SM%", "sm", 4, true, true, 0,
     [](const ProcessRow& r, const ProcessHostUse*) {
       return r.sm_utilization ? std::to_string(*r.sm_utilization) : std::string("-");
     },
     [](const ProcessRow& r, const ProcessHostUse*) { return key_of(r.sm_utilization); }, nullptr},
    {TopColumn::kCpu, "CPU%", "cpu", 5, true, true, 3,
     [](const ProcessRow&, const ProcessHostUse* u) {
       return u && u->cpu_percent ? cpu_text(*u->cpu_percent) : std::string("-");
     },
     [](const ProcessRow&, const ProcessHostUse* u) { return u ? key_of(u->cpu_percent) : TopSortKey{false, 0}; },
     nullptr},
    {TopColumn::kRss, "RSS", "rss", 5, true, true, 4,
     [](const ProcessRow&, const ProcessHostUse* u) { return u && u->rss_kib ? rss_text(*u->rss_kib) : std::string("-"); },
     [](const ProcessRow&, const ProcessHostUse* u) { return u ? key_of(u->rss_kib) : TopSortKey{false, 0}; }, nullptr},
    {TopColumn::kTime, "TIME", "time", 8, true, true, 5,
     [](const ProcessRow&, const ProcessHostUse* u) {
       return u && u->elapsed_s ? elapsed_text(*u->elapsed_s) : std::string("-");
     },
     [](const ProcessRow&, const ProcessHostUse* u) { return u ? key_of(u->elapsed_s) : TopSortKey{false, 0}; },
     nullptr},
    {TopColumn::kJob, "JOB", "job", 7, false, false, 2,
     [](const ProcessRow& r, const ProcessHostUse*) {
       if (r.slurm_job_id) return printable(*r.slurm_job_id);
       return r.job.empty() ? std::string("-") : printable(r.job);
     },
     nullptr,
     [](const ProcessRow& r, const std::string& v) {
       return (r.slurm_job_id && *r.slurm_job_id == v) || r.job.find(v) != std::string::npos;
     }},
    // The global rank (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID...), else the local one.
    {TopColumn::kRank, "RANK", "rank", 4, false, false, 1,
     [](const ProcessRow& r, const ProcessHostUse*) {
       if (r.global_rank) return printable(*r.global_rank);
       return r.rank ? std::to_string(*r.rank) : std::string("-");
     },
     [](const ProcessRow& r, const ProcessHostUse*) { return key_of(r.rank); }, nullptr},
    {TopColumn::kCommand, "COMMAND", "command", 0, false, false, 0,
     [](const ProcessRow& r, const ProcessHostUse*) { return printable(r.command.value_or("?")); }, nullptr, nullptr},
};

const ProcessHostUse* use_of(const ProcessRow& r, const TopFrame& f) {
  if (!r.local_pid) return nullptr;
  auto it = f.host_use.find(*r.local_pid);
  return it == f.host_use.end() ? nullptr : &it->second;
}

std::string cell(const ProcessRow& r, TopColumn c, const ProcessHostUse* use = nullptr) {
  return top_column(c).value(r, use);
}

/// The sort key's comparison, in the column's own direction (resources largest first), turned
/// by `reverse`; unknown values last either way; ties by GPU, then pid.
bool before(const ProcessRow& a, const ProcessRow& b, const TopColumnSpec& c, bool reverse, const TopFrame& f) {
  const ProcessHostUse *ua = use_of(a, f), *ub = use_of(b, f);
  bool descending = c.largest_first != reverse;
  if (c.sort) {
    TopSortKey x = c.sort(a, ua), y = c.sort(b, ub);
    if (x.known != y.known) return x.known;
    if (x.known && x.number != y.number) return descending ? x.number > y.number : x.number < y.number;
  } else {
    std::string x = c.value(a, ua), y = c.value(b, ub);
    if (x != y) return descending ? x > y : x < y;
  }
  return std::tie(a.nvml_index, a.pid) < std::tie(b.nvml_index, b.pid);
}

bool matches(const ProcessRow& r, const std::string& filter) {
  if (filter.empty()) return true;
  size_t colon = filter.find(':');
  if (colon != std::string::npos) {
    std::string key = lower(filter.substr(0, colon));
    for (const TopColumnSpec& c : kColumns)
      if (c.filter && key == c.name) return c.filter(r, filter.substr(colon + 1));
  }
  std::string v = lower(filter);
  return lower(r.command.value_or("")).find(v) != std::string::npos ||
         lower(r.user.value_or("")).find(v) != std::string::npos;
}

}  // namespace

std::string top_fit(const std::string& s, size_t w, bool right) { return fit(s, w, right); }
std::string top_cut_at_word(const std::string& text, size_t cells) { return cut_at_word(text, cells); }

TopLineBuilder& TopLineBuilder::add(const std::string& text, TopAttr a) {
  if (used >= width || text.empty()) return *this;
  std::string t = display_width(text) > width - used ? ellipsize(text, width - used) : text;
  used += display_width(t);
  line.push_back({t, a});
  return *this;
}

TopLineBuilder& TopLineBuilder::words(const std::string& text, TopAttr a) {
  return add(cut_at_word(text, width > used ? width - used : 0), a);
}

const std::vector<TopColumnSpec>& top_columns() { return kColumns; }

const TopColumnSpec& top_column(TopColumn c) {
  for (const TopColumnSpec& s : kColumns)
    if (s.id == c) return s;
  return kColumns.back();
}

const char* top_column_name(TopColumn c) { return top_column(c).header; }

std::optional<TopColumn> top_column_named(const std::string& name) {
  std::string n = lower(name);
  for (const TopColumnSpec& c : kColumns)
    if (n == c.name || n == lower(c.header)) return c.id;
  return std::nullopt;
}

std::vector<std::string> top_column_words() {
  std::vector<std::string> out;
  for (const TopColumnSpec& c : kColumns) out.push_back(c.name);
  return out;
}

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
    if (!matches(r, filter)) continue;
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

/// The columns shown at `width` cells and their widths, in order: the command takes what is
/// left; when that is under 12 cells, columns with a drop order go, those with no value in any
/// row first, then highest drop order first (the sort column never goes).
using Layout = std::vector<std::pair<const TopColumnSpec*, size_t>>;
Layout column_layout(size_t width, const std::vector<TopRow>& rows, const TopFrame& f, const TopView& v) {
  Layout w;
  for (const TopColumnSpec& c : kColumns) w.push_back({&c, c.width});
  auto longest = [&](const TopColumnSpec& c) {
    size_t n = 0;
    for (const TopRow& r : rows)
      if (r.row) n = std::max(n, display_width(c.value(*r.row, use_of(*r.row, f))));
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
      if (r.row && c.value(*r.row, use_of(*r.row, f)) != "-") return false;
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
    b.add(fit(name, cells, c->right) + (c->id == TopColumn::kCommand ? "" : " "), TopAttr::kHeader);
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
    b.add(fit(std::to_string(tr.parent_pid), pid_cells, true) + " ", TopAttr::kDim)
        .add(std::string(before_command, ' '))
        .add(cmd, selected ? TopAttr::kSelected : TopAttr::kDim);
    return b.done();
  }
  const ProcessRow& r = *tr.row;
  const ProcessHostUse* use = use_of(r, f);
  // (a plain Severity and a flag: GCC 12 at -O2 warns maybe-uninitialized on the optional's value)
  const std::optional<Severity> found = worst_for(r, f.ps.result);
  const bool coloured = found.has_value() && (*found != Severity::kInfo || v.show_info);
  const Severity worst = coloured ? *found : Severity::kInfo;
  for (const auto& [c, cells] : w) {
    std::string text = c->value(r, use);
    if (c->id == TopColumn::kCommand && tr.depth > 0)
      text = std::string(2 * (tr.depth - 1), ' ') + (v.utf8 ? "└─ " : "`- ") + text;
    TopAttr a = selected ? TopAttr::kSelected : TopAttr::kNormal;
    if (!selected && c->id == TopColumn::kCuda && coloured) a = severity_attr(worst);
    if (!selected && r.state == ProcessState::kExited) a = TopAttr::kDim;
    b.add(fit(text, cells, c->right) + (c->id == TopColumn::kCommand ? "" : " "), a);
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
      {"c", "GPU lines: one line per GPU or the full blocks"},
      {"i", "show or hide info findings"},
      {"k", "signal the selected process (asks which, then y sends)"},
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
  if (std::none_of(kColumns.begin(), kColumns.end(), [&](const TopColumnSpec& c) { return c.filter && key == c.name; }))
    return std::nullopt;  // text with a colon
  if (value.empty()) return "filter '" + filter + "' has no value: write " + key + ":VALUE";
  if (key == "pid" && !all_digits(value)) return "filter '" + filter + "': a pid is a number (pid:1234)";
  return std::nullopt;
}

std::vector<TopRow> top_rows(const TopFrame& frame, const TopView& view) {
  std::vector<const ProcessRow*> rows;
  const TopColumnSpec& column = top_column(view.sort);
  for (const ProcessRow& r : frame.ps.result.rows)
    if (matches(r, view.filter)) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [&](const ProcessRow* a, const ProcessRow* b) {
    return before(*a, *b, column, view.reverse, frame);
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

/// The footer: a prompt, the last action's outcome, else the keys; the active filter always, cut
/// at words (with an ellipsis) only when the line cannot hold it.
TopLine footer(const TopView& view, size_t width) {
  std::vector<TopSpan> spans;
  if (view.prompt == TopView::Prompt::kFilter) {
    spans = {{"filter: ", TopAttr::kBold}, {printable(view.typed) + "_", TopAttr::kNormal},
             {"  (Enter applies, Esc clears)", TopAttr::kDim}};
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
  std::string filter = view.filter.empty() || view.prompt == TopView::Prompt::kFilter ? ""
                                                                                       : "  filter: " + printable(view.filter);
  // The filter first: what precedes it gives way (cut at words) until it fits.
  size_t room = width > display_width(filter) ? width - display_width(filter) : 0;
  LineBuilder b{width};
  size_t used = 0;
  for (const TopSpan& sp : spans) {
    std::string t = sp.text;
    if (used + display_width(t) > room) t = cut_at_word(t, room > used ? room - used : 0);
    used += display_width(t);
    b.add(t, sp.attr);
  }
  if (!filter.empty()) b.add(display_width(filter) > width ? cut_at_word(filter, width) : filter, TopAttr::kWarn);
  return b.done();
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
          .add("GPU " + std::to_string(f.gpu) + " " + f.id + " (pid " + pid_list(f.pids) + "): ");
      l.add(cut_at_word(printable(f.message), l.width > l.used ? l.width - l.used : 0), TopAttr::kDim);  // at a word
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
    if (height) {
      while (out.size() + 1 < height) out.push_back({});
      out.push_back(LineBuilder{width}
                        .add("Esc/q back  Up/Down scroll  Left/Right shift  k signal", TopAttr::kDim)
                        .done());
    }
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
  if (height)
    while (out.size() + finding_lines + 1 < height) out.push_back({});
  add_findings(out, shown, hidden_info, finding_lines, height, width);
  if (height) {
    while (out.size() + 1 < height) out.push_back({});
    out.resize(height - 1);
    out.push_back(footer(view, width));
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

std::string top_clock_text(int64_t unix_ms) { return clock_text(unix_ms); }
std::string top_seconds_text(double s) { return seconds_text(s); }
void top_asciify(std::vector<TopLine>& lines) { asciify(lines); }

std::vector<TopLine> top_too_small(size_t width, size_t height) {
  std::string text = "gpumap top needs at least 80x24; this terminal is " + std::to_string(width) + "x" +
                     std::to_string(height) + " (q quits)";
  std::vector<TopLine> out;
  for (const std::string& line : split(wrap(text, std::max<size_t>(width, 1), 0, 0), '\n'))
    out.push_back({{display_width(line) > width ? ellipsize(line, width) : line, TopAttr::kWarn}});
  return out;
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
