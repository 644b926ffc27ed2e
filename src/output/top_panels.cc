#include "output/top_panels.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "model/text.h"
#include "output/style.h"

namespace gpumap {
namespace {

using LineBuilder = TopLineBuilder;

std::string pid_list(const std::vector<uint32_t>& pids) {
  std::string s;
  for (size_t i = 0; i < pids.size() && i < 4; ++i) s += (i ? "," : "") + std::to_string(pids[i]);
  if (pids.size() > 4) s += ",+" + std::to_string(pids.size() - 4);
  return s;
}

/// "12.3/62.8G" from KiB.
std::string gib_pair(std::optional<uint64_t> used, std::optional<uint64_t> total) {
  auto g = [](uint64_t kib) {
    char buf[32];
    double v = static_cast<double>(kib) / (1024.0 * 1024);
    std::snprintf(buf, sizeof buf, v < 100 ? "%.1f" : "%.0f", v);
    return std::string(buf);
  };
  return (used ? g(*used) : std::string("?")) + "/" + (total ? g(*total) : std::string("?")) + "G";
}

/// "3d 04:12", "5:07:33" since boot.
std::string uptime_text(double s) {
  char buf[32];
  auto t = static_cast<long long>(s);
  if (t >= 86400)
    std::snprintf(buf, sizeof buf, "%lldd %02lld:%02lld", t / 86400, t / 3600 % 24, t / 60 % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  return buf;
}

}  // namespace

std::vector<TopShownFinding> top_shown_findings(const PsResult& ps, const std::string& filter) {
  std::vector<TopShownFinding> out;
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
  std::stable_sort(out.begin(), out.end(), [](const TopShownFinding& a, const TopShownFinding& b) {
    return std::make_tuple(-static_cast<int>(a.severity), a.gpu) <
           std::make_tuple(-static_cast<int>(b.severity), b.gpu);
  });
  return out;
}

void top_findings_lines(std::vector<TopLine>& out, const std::vector<const TopShownFinding*>& shown, size_t hidden_info,
                        size_t finding_lines, size_t height, size_t width) {
  if (!finding_lines) return;
  LineBuilder b{width};
  b.add("Findings", TopAttr::kHeader);
  if (hidden_info)
    b.add("  (" + std::to_string(hidden_info) + " info hidden: " + (height ? "i shows" : "--all shows") + ")",
          TopAttr::kDim);
  out.push_back(b.done());
  for (size_t i = 0; i < shown.size() && i + 1 < finding_lines; ++i) {
    const TopShownFinding& f = *shown[i];
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
          out.push_back(LineBuilder{width}
                            .add("  ")
                            .add(head, top_severity_attr(f.severity))
                            .add(piece.substr(2 + head.size()))
                            .done());
        else
          out.push_back(LineBuilder{width}.add(piece).done());
        if (nl == std::string::npos) break;
        at = nl + 1;
      }
      if (!f.fix.empty())
        out.push_back(LineBuilder{width + f.fix.size()}.add("      fix: " + printable(f.fix), TopAttr::kBold).done());
      continue;
    } else {
      l.add("  [" + std::string(severity_name(f.severity)) + "] ", top_severity_attr(f.severity))
          .add("GPU " + std::to_string(f.gpu) + " " + f.id + " (pid " + pid_list(f.pids) + "): ");
      l.add(top_cut_at_word(printable(f.message), l.width > l.used ? l.width - l.used : 0),
            TopAttr::kDim);  // at a word
    }
    out.push_back(l.done());
    if (last_room) break;
  }
}

void top_host_panel_lines(std::vector<TopLine>& out, const TopHostPanel& h, const TopView& v, size_t width,
                          size_t height) {
  if (height < 30 || !h.known()) return;
  auto pct = [](std::optional<uint64_t> used, std::optional<uint64_t> total) -> std::optional<uint32_t> {
    if (!used || !total || !*total) return std::nullopt;
    return static_cast<uint32_t>(*used * 100 / *total);
  };
  auto level = [](std::optional<uint32_t> p) {
    return !p ? TopAttr::kDim : *p >= 90 ? TopAttr::kBad : *p >= 60 ? TopAttr::kWarn : TopAttr::kGood;
  };
  std::optional<uint32_t> cpu;
  if (h.cpu_percent) cpu = static_cast<uint32_t>(*h.cpu_percent + 0.5);
  std::optional<uint32_t> mem = pct(h.mem_used_kib, h.mem_total_kib), swap = pct(h.swap_used_kib, h.swap_total_kib);
  size_t bar = width >= 160 ? 20 : width >= 120 ? 12 : 6;
  LineBuilder b{width};
  b.add("CPU", TopAttr::kBold)
      .add(top_bar(cpu, bar, v.utf8), level(cpu))
      .add(top_fit(cpu ? std::to_string(*cpu) + "%" : "-", 5, true));
  b.add("  MEM", TopAttr::kBold)
      .add(top_bar(mem, bar, v.utf8), level(mem))
      .add(" " + gib_pair(h.mem_used_kib, h.mem_total_kib));
  if (h.swap_total_kib && *h.swap_total_kib)
    b.add("  SWP", TopAttr::kBold)
        .add(top_bar(swap, bar, v.utf8), level(swap))
        .add(" " + gib_pair(h.swap_used_kib, h.swap_total_kib));
  if (h.load1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  load %.2f %.2f %.2f", *h.load1, h.load5.value_or(0), h.load15.value_or(0));
    b.add(buf);
  }
  if (h.uptime_s) b.add("  up " + uptime_text(*h.uptime_s), TopAttr::kDim);
  out.push_back(b.done());
  if (height < 40 || h.core_percent.size() < 2) return;
  std::deque<uint8_t> cores;  // one cell a core, as a sparkline draws a sample
  for (double c : h.core_percent) cores.push_back(static_cast<uint8_t>(std::min(100.0, c)));
  size_t room = width > 12 ? width - 12 : 1;
  LineBuilder c{width};
  c.add("cores " + std::to_string(cores.size()) + " ", TopAttr::kDim);
  std::deque<uint8_t> first(cores.begin(), cores.begin() + static_cast<long>(std::min(room, cores.size())));
  c.add(top_sparkline(first, first.size(), v.utf8), TopAttr::kGood);
  out.push_back(c.done());
}

}  // namespace gpumap
