#include "output/fleet_top_view.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "findings/severity.h"
#include "model/ascii.h"
#include "model/text.h"
#include "output/style.h"
#include "output/top_keymap.h"

namespace gpumap {
namespace {

using ascii::lower;

bool contains(const std::string& hay, const std::string& needle) { return lower(hay).find(lower(needle)) != std::string::npos; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// An age in at most five cells: "95s", "12m", "3.1h".
std::string short_age(double s) {
  if (s < 120) return fmt("%.0fs", std::max(0.0, s));
  if (s < 7200) return fmt("%.0fm", s / 60);
  return fmt("%.1fh", s / 3600);
}

/// A value from outside (a label), safe for a terminal; "?" when the exporter did not send it.
std::string shown(const std::optional<std::string>& v) { return v ? printable(*v) : "?"; }

// --- the filter ----------------------------------------------------------------------------------

struct Filter {
  enum Kind { kNone, kNode, kUser, kJob, kGpu, kPid, kText } kind = kNone;
  std::string value;
};

const char* const kFilterKeys[] = {"node", "user", "job", "gpu", "pid"};

Filter parse_filter(const std::string& text) {
  if (text.empty()) return {};
  size_t colon = text.find(':');
  if (colon != std::string::npos) {
    std::string key = lower(text.substr(0, colon));
    for (size_t i = 0; i < std::size(kFilterKeys); ++i)
      if (key == kFilterKeys[i]) return {static_cast<Filter::Kind>(Filter::kNode + i), text.substr(colon + 1)};
  }
  return {Filter::kText, text};
}

bool node_named(const FleetNode& n, const std::string& v) { return contains(n.node, v) || contains(n.instance, v); }

bool gpu_matches(const FleetGpu& g, const std::string& v) {
  if (g.nvml_index && std::to_string(*g.nvml_index) == v) return true;
  return (g.name && contains(*g.name, v)) || lower(g.uuid).rfind(lower(v), 0) == 0;
}

bool process_matches(const FleetProcess& p, const FleetGpu& g, const Filter& f) {
  switch (f.kind) {
    case Filter::kNone:
    case Filter::kNode: return true;
    case Filter::kUser: return p.user && *p.user == f.value;
    case Filter::kJob: return p.slurm_job_id == f.value;
    case Filter::kGpu: return gpu_matches(g, f.value);
    case Filter::kPid: return p.pid && std::to_string(*p.pid) == f.value;
    case Filter::kText: return contains(p.user.value_or(""), f.value) || contains(p.command.value_or(""), f.value);
  }
  return true;
}

/// Whether the whole node is shown (the filter names it, or there is none).
bool whole_node(const FleetNode& n, const Filter& f) {
  return f.kind == Filter::kNone || ((f.kind == Filter::kNode || f.kind == Filter::kText) && node_named(n, f.value));
}

bool gpu_shown(const FleetGpu& g, const Filter& f) {
  if (f.kind == Filter::kGpu) return gpu_matches(g, f.value);
  for (const FleetProcess& p : g.processes)
    if (process_matches(p, g, f)) return true;
  return false;
}

bool node_shown(const FleetNode& n, const Filter& f) {
  if (whole_node(n, f)) return true;
  if (f.kind == Filter::kNode) return false;
  if (!n.up) return true;  // a node down is never left out by what its processes might have been
  for (const FleetGpu& g : n.gpus)
    if (gpu_shown(g, f)) return true;
  return false;
}

// --- a node's numbers ----------------------------------------------------------------------------

struct NodeFindings {
  size_t places = 0;
  Severity worst = Severity::kInfo;
};

std::map<std::string, NodeFindings> findings_by_instance(const FleetAnswer& a) {
  std::map<std::string, NodeFindings> out;
  for (const FleetCause& c : a.causes)
    for (const FleetFindingPlace& p : c.places) {
      NodeFindings& n = out[p.instance];
      if (!n.places || c.severity > n.worst) n.worst = c.severity;
      ++n.places;
    }
  return out;
}

/// A GPU's processes: its count (listed or not; --processes may list only those with findings).
size_t listed_or_counted(const FleetGpu& g) {
  return std::max<size_t>(static_cast<size_t>(std::max<long long>(g.process_count, 0)), g.processes.size());
}

struct NodeNumbers {
  size_t gpus = 0, processes = 0;
  std::optional<double> used, total;  // bytes, over the GPUs that said
  std::optional<double> util_mean, util_max;  // percent
};

NodeNumbers numbers(const FleetNode& n) {
  NodeNumbers r;
  r.gpus = n.gpus.size();
  double util_sum = 0;
  size_t util_n = 0;
  for (const FleetGpu& g : n.gpus) {
    r.processes += listed_or_counted(g);
    if (g.memory_used_bytes) r.used = r.used.value_or(0) + *g.memory_used_bytes;
    if (g.memory_total_bytes) r.total = r.total.value_or(0) + *g.memory_total_bytes;
    if (g.utilization_ratio) {
      double u = *g.utilization_ratio * 100;
      util_sum += u;
      ++util_n;
      r.util_max = std::max(r.util_max.value_or(0), u);
    }
  }
  if (util_n) r.util_mean = util_sum / util_n;
  return r;
}

/// The node's state as the STATE column says it, and how it is drawn.
std::pair<std::string, TopAttr> state_cell(const FleetNode& n) {
  std::string age = n.last_read_age_s ? " " + short_age(*n.last_read_age_s) : std::string(" never");
  if (!n.up) return {(n.down_reason == "not_in_answer" ? "MISSING" : "DOWN") + age, TopAttr::kBad};
  if (n.exporter_up && !*n.exporter_up) return {"NO READ" + age, TopAttr::kBad};
  if (n.exporter_stale && *n.exporter_stale) return {"STALE" + age, TopAttr::kWarn};
  return {"up" + age, TopAttr::kGood};
}

int state_rank(const FleetNode& n) {
  if (!n.up) return 0;
  if (n.exporter_up && !*n.exporter_up) return 1;
  if (n.exporter_stale && *n.exporter_stale) return 2;
  return 3;
}

std::string gib(double bytes) { return fmt(bytes < 10.0 * (1 << 30) ? "%.1f" : "%.0f", bytes / (1 << 30)); }

std::string memory_cell(const NodeNumbers& x) {
  if (!x.used && !x.total) return "-";
  return (x.used ? gib(*x.used) : std::string("?")) + "/" + (x.total ? gib(*x.total) : std::string("?")) + "G";
}

std::string util_cell(const NodeNumbers& x) {
  if (!x.util_mean) return "-";
  return fmt("%.0f", *x.util_mean) + "/" + fmt("%.0f%%", *x.util_max);
}

struct ColumnSpec {
  FleetTopColumn id;
  const char* header;
  const char* name;
  size_t width;  // 0: the node column, which takes what is left
  bool right;
  bool largest_first;
};

const ColumnSpec kColumns[] = {
    {FleetTopColumn::kNode, "NODE", "node", 0, false, false},
    {FleetTopColumn::kState, "STATE", "state", 10, false, false},
    {FleetTopColumn::kGpus, "GPUS", "gpus", 4, true, true},
    {FleetTopColumn::kMemory, "MEMORY", "mem", 12, true, true},
    {FleetTopColumn::kUtil, "UTIL avg/max", "util", 12, true, true},
    {FleetTopColumn::kProcesses, "PROCS", "procs", 5, true, true},
    {FleetTopColumn::kFindings, "FINDINGS", "findings", 8, true, true},
};

const ColumnSpec& spec(FleetTopColumn c) {
  for (const ColumnSpec& s : kColumns)
    if (s.id == c) return s;
  return kColumns[0];
}

/// The sort key of a node in column `c`: nullopt for unknown (always last).
std::optional<double> sort_number(const FleetNode& n, FleetTopColumn c, const std::map<std::string, NodeFindings>& f) {
  NodeNumbers x = numbers(n);
  switch (c) {
    case FleetTopColumn::kNode: return std::nullopt;
    case FleetTopColumn::kState: return state_rank(n);
    case FleetTopColumn::kGpus: return static_cast<double>(x.gpus);
    case FleetTopColumn::kMemory: return x.used;
    case FleetTopColumn::kUtil: return x.util_mean;
    case FleetTopColumn::kProcesses: return static_cast<double>(x.processes);
    case FleetTopColumn::kFindings: {
      auto it = f.find(n.instance);
      return it == f.end() ? 0.0 : static_cast<double>(it->second.places);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<FleetTopColumn> fleet_top_column_named(const std::string& name) {
  for (const ColumnSpec& s : kColumns)
    if (lower(name) == s.name || lower(name) == lower(s.header)) return s.id;
  if (lower(name) == "memory") return FleetTopColumn::kMemory;
  return std::nullopt;
}

std::vector<std::string> fleet_top_column_words() {
  std::vector<std::string> out;
  for (const ColumnSpec& s : kColumns) out.push_back(s.name);
  return out;
}

const char* fleet_top_column_name(FleetTopColumn c) { return spec(c).header; }

std::optional<std::string> fleet_top_filter_error(const std::string& filter) {
  Filter f = parse_filter(filter);
  if (f.kind == Filter::kNone || f.kind == Filter::kText) return std::nullopt;
  std::string key = filter.substr(0, filter.find(':'));
  if (f.value.empty()) return "filter '" + filter + "' has no value: write " + lower(key) + ":VALUE";
  if (f.kind == Filter::kPid && !std::all_of(f.value.begin(), f.value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return "filter '" + filter + "': a pid is a number (pid:1234)";
  return std::nullopt;
}

std::vector<FleetTopRow> fleet_top_rows(const FleetTopFrame& frame, const FleetTopView& view) {
  std::vector<FleetTopRow> out;
  if (!frame.answer) return out;
  const FleetAnswer& a = *frame.answer;
  Filter f = parse_filter(view.filter);
  std::vector<const FleetNode*> nodes;
  for (const FleetNode& n : a.nodes)
    if (node_shown(n, f)) nodes.push_back(&n);
  const ColumnSpec& col = spec(view.sort);
  if (view.sort != FleetTopColumn::kNode) {
    std::map<std::string, NodeFindings> fi = findings_by_instance(a);
    bool largest = col.largest_first != view.reverse;
    std::stable_sort(nodes.begin(), nodes.end(), [&](const FleetNode* x, const FleetNode* y) {
      std::optional<double> kx = sort_number(*x, view.sort, fi), ky = sort_number(*y, view.sort, fi);
      if (kx.has_value() != ky.has_value()) return kx.has_value();  // unknown last either way
      if (!kx || *kx == *ky) return false;  // the answer's order (by node name) for ties
      return largest ? *kx > *ky : *kx < *ky;
    });
  } else if (view.reverse) {
    std::reverse(nodes.begin(), nodes.end());
  }
  for (const FleetNode* n : nodes) {
    out.push_back({FleetTopRow::Kind::kNode, n, nullptr, nullptr});
    if (!view.expanded.count(n->instance)) continue;
    bool whole = whole_node(*n, f);
    for (const FleetGpu& g : n->gpus) {
      if (!whole && !gpu_shown(g, f)) continue;
      out.push_back({FleetTopRow::Kind::kGpu, n, &g, nullptr});
      for (const FleetProcess& p : g.processes)
        if (whole || process_matches(p, g, f)) out.push_back({FleetTopRow::Kind::kProcess, n, &g, &p});
    }
  }
  return out;
}

namespace {

using LineBuilder = TopLineBuilder;

struct Layout {
  size_t node = 20;
};

Layout layout(size_t width) {
  size_t fixed = 2;
  for (const ColumnSpec& s : kColumns) fixed += s.width ? s.width + 1 : 0;
  Layout l;
  l.node = width > fixed + 12 ? std::min<size_t>(width - fixed, 48) : 12;
  return l;
}

std::string column_text(const ColumnSpec& s, const std::string& text, const Layout& l) {
  return top_fit(text, s.width ? s.width : l.node, s.right);
}

TopLine table_header(const FleetTopView& v, const Layout& l, size_t width) {
  LineBuilder b{width};
  b.add("  ");
  for (const ColumnSpec& s : kColumns) {
    std::string h = s.header;
    if (s.id == v.sort) h += (s.largest_first != v.reverse) ? (v.utf8 ? "▼" : "v") : (v.utf8 ? "▲" : "^");
    b.add((s.width ? " " : "") + column_text(s, h, l), TopAttr::kHeader);
  }
  return b.done();
}

std::string where_text(const FleetProcess& p) {
  std::string s;
  if (!p.slurm_job_id.empty()) {
    s += "  job " + printable(p.slurm_job_id);
    if (!p.rank.empty()) s += " rank " + printable(p.rank);
  }
  if (!p.pod.empty()) s += "  pod " + printable(p.ns.empty() ? p.pod : p.ns + "/" + p.pod);
  return s;
}

TopLine row_line(const FleetTopRow& r, const FleetTopView& v, const Layout& l, const std::map<std::string, NodeFindings>& fi,
                 bool selected, size_t width) {
  LineBuilder b{width};
  auto attr = [&](TopAttr a) { return selected ? TopAttr::kSelected : a; };
  if (r.kind == FleetTopRow::Kind::kNode) {
    const FleetNode& n = *r.node;
    bool open = v.expanded.count(n.instance) > 0;
    b.add(open ? (v.utf8 ? "▾ " : "- ") : (v.utf8 ? "▸ " : "+ "), attr(TopAttr::kDim));
    NodeNumbers x = numbers(n);
    auto [state, state_attr] = state_cell(n);
    auto it = fi.find(n.instance);
    size_t places = it == fi.end() ? 0 : it->second.places;
    TopAttr fattr = !places ? TopAttr::kNormal : it->second.worst == Severity::kError ? TopAttr::kBad
                                                 : it->second.worst == Severity::kWarning ? TopAttr::kWarn
                                                                                          : TopAttr::kInfo;
    for (const ColumnSpec& s : kColumns) {
      std::string text;
      TopAttr a = TopAttr::kNormal;
      switch (s.id) {
        case FleetTopColumn::kNode: text = printable(n.node); a = TopAttr::kBold; break;
        case FleetTopColumn::kState: text = state; a = state_attr; break;
        case FleetTopColumn::kGpus: text = n.up || x.gpus ? std::to_string(x.gpus) : "-"; break;
        case FleetTopColumn::kMemory: text = memory_cell(x); break;
        case FleetTopColumn::kUtil: text = util_cell(x); break;
        case FleetTopColumn::kProcesses: text = n.up || x.processes ? std::to_string(x.processes) : "-"; break;
        case FleetTopColumn::kFindings: text = std::to_string(places); a = fattr; break;
      }
      b.add((s.width ? " " : "") + column_text(s, text, l), attr(a));
    }
    if (selected) b.add(std::string(width > b.used ? width - b.used : 0, ' '), TopAttr::kSelected);
    return b.done();
  }
  const FleetGpu& g = *r.gpu;
  if (r.kind == FleetTopRow::Kind::kGpu) {
    b.add("    GPU " + (g.nvml_index ? std::to_string(*g.nvml_index) : std::string("?")) + "  ", attr(TopAttr::kBold));
    b.add(shown(g.name) + "  ", attr(TopAttr::kNormal));
    std::string mem = "mem " + (g.memory_used_bytes ? fmt("%.0f", *g.memory_used_bytes / 1048576.0) : std::string("?")) + "/" +
                      (g.memory_total_bytes ? fmt("%.0f", *g.memory_total_bytes / 1048576.0) : std::string("?")) + " MiB";
    b.add(mem + "  util " + (g.utilization_ratio ? fmt("%.0f%%", *g.utilization_ratio * 100) : std::string("?")) +
              (g.temperature_celsius ? fmt("  %.0fC", *g.temperature_celsius) : std::string()) + "  ",
          attr(TopAttr::kNormal));
    size_t count = listed_or_counted(g);
    if (count > g.processes.size())  // --processes auto past 2 000, or with-findings: said, never hidden
      b.add(std::to_string(count) + " processes, " + std::to_string(g.processes.size()) + " with findings listed  ",
            attr(TopAttr::kWarn));
    b.add(printable(g.uuid), attr(TopAttr::kDim));
  } else {
    const FleetProcess& p = *r.process;
    std::string cuda = p.cuda_ordinal ? "cuda:" + std::to_string(*p.cuda_ordinal) : std::string("cuda:?");
    b.add("      pid " + (p.pid ? std::to_string(*p.pid) : std::string("?")) + "  ", attr(TopAttr::kNormal));
    b.add(cuda, attr(TopAttr::kBold));
    b.add("  " + shown(p.user) + where_text(p) + "  ", attr(TopAttr::kNormal));
    if (!p.findings.empty()) {
      std::string ids;
      for (const std::string& id : p.findings) ids += (ids.empty() ? "[" : " ") + printable(id);
      b.add(ids + "]  ", attr(TopAttr::kWarn));
    }
    b.add(shown(p.command), attr(TopAttr::kDim));
  }
  if (selected) b.add(std::string(width > b.used ? width - b.used : 0, ' '), TopAttr::kSelected);
  return b.done();
}

/// One line per cause: severity, id, how many places on how many nodes, then the places (cut at
/// the edge live; with no height every place, wrapped).
std::vector<TopLine> cause_lines(const FleetAnswer& a, const std::vector<FleetTopRow>& rows, size_t width, bool all) {
  std::set<std::string> shown_nodes;
  for (const FleetTopRow& r : rows) shown_nodes.insert(r.node->instance);
  std::vector<TopLine> out;
  for (const FleetCause& c : a.causes) {
    std::vector<const FleetFindingPlace*> places;
    std::set<std::string> nodes;
    for (const FleetFindingPlace& p : c.places)
      if (shown_nodes.count(p.instance)) {
        places.push_back(&p);
        nodes.insert(p.node);
      }
    if (places.empty()) continue;
    std::string where;
    for (const FleetFindingPlace* p : places) {
      std::string one = printable(p->node);
      if (p->pid) one += " pid " + std::to_string(*p->pid);
      if (!p->slurm_job_id.empty()) one += " (job " + printable(p->slurm_job_id) + ")";
      where += (where.empty() ? "" : ", ") + one;
    }
    std::string head = std::string("[") + severity_name(c.severity) + "] ";
    std::string text = printable(c.id) + ": " + std::to_string(places.size()) + " place" + (places.size() == 1 ? "" : "s") + " on " +
                       std::to_string(nodes.size()) + " node" + (nodes.size() == 1 ? "" : "s") + ": " + where;
    if (!all) {
      out.push_back(LineBuilder{width}.add("  " + head, top_severity_attr(c.severity)).words(text).done());
      continue;
    }
    std::vector<std::string> wrapped = split(wrap(head + text, width, 2, 6), '\n');
    for (size_t i = 0; i < wrapped.size(); ++i) {
      if (i == 0 && wrapped[i].size() >= 2 + head.size())
        out.push_back(LineBuilder{width}.add("  ").add(head, top_severity_attr(c.severity)).add(wrapped[i].substr(2 + head.size())).done());
      else
        out.push_back(LineBuilder{width}.add(wrapped[i]).done());
    }
  }
  return out;
}

std::vector<TopLine> help_lines(size_t width) {
  return key_help_lines("gpumap top --prometheus: keys", key_help(fleet_top_keymap()), width);
}

TopLine footer(const FleetTopView& view, size_t width) {
  if (view.filter_prompt) return footer_line(filter_prompt_spans(view.typed), "", width);
  if (!view.message.empty()) return footer_line({{printable(view.message), TopAttr::kInfo}}, view.filter, width);
  return footer_line({{"q quit  h help  Enter expand  Left fold  e all  <> sort  / filter  space pause", TopAttr::kDim}},
                     view.filter, width);
}

std::vector<TopLine> head_lines(const FleetTopFrame& frame, const FleetTopView& view, const TopStatus& status, size_t width) {
  std::vector<TopLine> out;
  const FleetAnswer* a = frame.answer.get();
  {
    LineBuilder b{width};
    b.add("gpumap top", TopAttr::kBold).add("  fleet: Prometheus " + (a ? printable(a->prometheus) : std::string("?")));
    b.add("  every " + top_seconds_text(view.interval_s));
    if (view.paused) b.add("  PAUSED", TopAttr::kWarn);
    if (status.now_unix_ms) b.add("  " + top_clock_text(status.now_unix_ms));
    out.push_back(b.done());
  }
  LineBuilder b{width};
  int64_t age_s = frame.read_unix_ms && status.now_unix_ms ? (status.now_unix_ms - frame.read_unix_ms) / 1000 : 0;
  bool waiting = status.reading && status.now_unix_ms - status.reading_since_ms > static_cast<int64_t>(view.interval_s * 2000) + 2000;
  if (!frame.error.empty()) {
    // The age first: the error's own words may be cut at the edge, the age never.
    b.words("Prometheus unreachable" +
                (a ? ", showing the answer of " + std::to_string(age_s) + "s ago (trying again every " +
                         top_seconds_text(view.interval_s) + "): "
                   : std::string(": ")) +
                printable(frame.error),
            TopAttr::kBad);
  } else if (a && waiting) {
    b.words("waiting for Prometheus for " + std::to_string((status.now_unix_ms - status.reading_since_ms) / 1000) +
                "s; showing the answer of " + std::to_string(age_s) + "s ago",
            TopAttr::kBad);
  } else if (!a) {
    b.add("asking Prometheus...", TopAttr::kDim);
  } else {
    size_t down = 0, stale = 0, gpus = 0, procs = 0;
    for (const FleetNode& n : a->nodes) {
      down += !n.up;
      stale += n.up && ((n.exporter_stale && *n.exporter_stale) || (n.exporter_up && !*n.exporter_up));
      gpus += n.gpus.size();
      for (const FleetGpu& g : n.gpus) procs += listed_or_counted(g);
    }
    std::string s = std::to_string(a->nodes.size()) + " node" + (a->nodes.size() == 1 ? "" : "s");
    if (down || stale)
      s += " (" + (down ? std::to_string(down) + " down" : std::string()) + (down && stale ? ", " : "") +
           (stale ? std::to_string(stale) + " stale" : std::string()) + ")";
    s += ", " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + ", " + std::to_string(procs) + " GPU process" +
         (procs == 1 ? "" : "es") + ", " + std::to_string(a->jobs.size()) + " Slurm job" + (a->jobs.size() == 1 ? "" : "s");
    if (a->listed == FleetProcessList::kWithFindings) s += "; only the processes with findings listed (--processes all)";
    if (a->partial) s += "; PARTIAL answer: a store or shard did not answer (its nodes MISSING)";
    b.words(s, down || a->partial ? TopAttr::kWarn : TopAttr::kDim);
  }
  out.push_back(b.done());
  return out;
}

std::vector<TopLine> render_screen(const FleetTopFrame& frame, const FleetTopView& view, const TopStatus& status, size_t width,
                                   size_t height, TableWindow* window) {
  std::vector<TopLine> out = head_lines(frame, view, status, width);
  if (view.screen == FleetTopView::Screen::kHelp) {
    for (TopLine& l : help_lines(width)) out.push_back(std::move(l));
    if (height && out.size() > height) out.resize(height);
    return out;
  }
  std::vector<FleetTopRow> rows = fleet_top_rows(frame, view);
  const FleetAnswer* a = frame.answer.get();
  std::vector<TopLine> causes;
  long long info = 0;
  if (a) {
    causes = cause_lines(*a, rows, width, height == 0);
    for (const auto& [id, count] : a->hidden_info) info += count;
  }
  size_t finding_lines = causes.empty() && !info ? 0 : causes.size() + 1;
  size_t table_room = rows.size() + (rows.empty() ? 1 : 0);
  if (height) {
    size_t findings_room = std::min<size_t>(finding_lines, 5);
    size_t fixed = out.size() + 1 /*header*/ + findings_room + 1 /*footer*/;
    table_room = height > fixed ? height - fixed : 0;
    if (table_room > rows.size() + 1) {  // room to spare: more findings
      size_t extra = std::min(table_room - rows.size() - 1, finding_lines - findings_room);
      findings_room += extra;
      table_room -= extra;
    }
    finding_lines = findings_room;
  }
  Layout l = layout(width);
  std::map<std::string, NodeFindings> fi = a ? findings_by_instance(*a) : std::map<std::string, NodeFindings>{};
  out.push_back(table_header(view, l, width));
  // The window: the selection always in it, and a line for the rows above and below it.
  TableWindow win = height ? table_window(rows.size(), view.selected, view.scroll, table_room)
                           : TableWindow{0, rows.size(), view.selected};
  for (size_t i = win.first; i < win.first + win.shown; ++i)
    out.push_back(row_line(rows[i], view, l, fi, height && i == win.selected, width));
  if (win.more_line) out.push_back(more_rows_line(win, view.utf8, width));
  if (window) *window = win;
  if (rows.empty() && a)
    out.push_back(LineBuilder{width}
                      .add(!view.filter.empty() ? "  no node matches " + printable(view.filter)
                           : a->filter.nodes.empty() && !a->filter.narrows_content()
                               ? "  no node exports gpumap's series to this Prometheus (is `gpumap serve` scraped? docs/fleet.md)"
                               : "  nothing matches the filters",
                           TopAttr::kDim)
                      .done());
  pad_frame(out, height, finding_lines + 1);
  if (finding_lines) {
    LineBuilder b{width};
    b.add("Findings by cause", TopAttr::kHeader);
    if (info) b.add("  (" + std::to_string(info) + " info counted, not listed: --all lists them)", TopAttr::kDim);
    out.push_back(b.done());
    for (size_t i = 0; i < causes.size() && i + 1 < finding_lines; ++i) {
      if (height && i + 2 == finding_lines && causes.size() > i + 1) {
        out.push_back(LineBuilder{width}.add("  ... " + std::to_string(causes.size() - i) + " more", TopAttr::kDim).done());
        break;
      }
      out.push_back(causes[i]);
    }
  }
  finish_frame(out, height, footer(view, width));
  return out;
}

}  // namespace

std::vector<TopLine> render_fleet_top(const FleetTopFrame& frame, const FleetTopView& view, const TopStatus& status, size_t width,
                                      size_t height, TableWindow* window) {
  std::vector<TopLine> lines = render_screen(frame, view, status, std::max<size_t>(width, 20), height, window);
  if (!view.utf8) top_asciify(lines);
  return lines;
}

}  // namespace gpumap
