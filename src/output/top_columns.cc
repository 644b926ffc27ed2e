// The process table's columns (one row each), the filter and the order of the rows: what the
// host's screen (output/top_view.cc) lays out.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "model/text.h"
#include "output/style.h"
#include "output/top_view.h"

namespace gpumap {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
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

}  // namespace

const ProcessHostUse* top_host_use(const ProcessRow& r, const TopFrame& f) {
  if (!r.local_pid) return nullptr;
  auto it = f.host_use.find(*r.local_pid);
  return it == f.host_use.end() ? nullptr : &it->second;
}

namespace {

/// The sort key's comparison, in the column's own direction (resources largest first), turned
/// by `reverse`; unknown values last either way; ties by GPU, then pid.
bool before(const ProcessRow& a, const ProcessRow& b, const TopColumnSpec& c, bool reverse, const TopFrame& f) {
  const ProcessHostUse *ua = top_host_use(a, f), *ub = top_host_use(b, f);
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

}  // namespace

bool top_row_matches(const ProcessRow& r, const std::string& filter) {
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
    if (top_row_matches(r, view.filter)) rows.push_back(&r);
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


}  // namespace gpumap
