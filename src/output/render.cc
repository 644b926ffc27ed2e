#include "output/render.h"

#include "model/text.h"
#include <algorithm>

namespace gpumap {

std::string render_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                         const TermStyle& st, const std::vector<std::string>& elastic) {
  return render_table(headers, rows, st, TableFit{elastic, {}, "", 0});
}

std::string render_table(const std::vector<std::string>& raw_headers, const std::vector<std::vector<std::string>>& raw_rows,
                         const TermStyle& st, const TableFit& fit) {
  // Cells carry other users' command lines, lease records and driver strings: never let them
  // drive the viewer's terminal.
  std::vector<std::string> headers;
  for (const std::string& h : raw_headers) headers.push_back(printable(h));
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : raw_rows) {
    rows.emplace_back();
    for (const std::string& c : r) rows.back().push_back(printable(c));
  }
  auto widths = [&] {
    std::vector<size_t> w(headers.size());
    for (size_t c = 0; c < headers.size(); ++c) w[c] = display_width(headers[c]);
    for (const auto& r : rows)
      for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], display_width(r[c]));
    return w;
  };
  size_t gap = 2;
  auto total = [&](const std::vector<size_t>& w) {
    size_t t = w.empty() ? 0 : gap * (w.size() - 1);
    for (size_t x : w) t += x;
    return t;
  };
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(headers.begin(), headers.end(), name) - headers.begin());
  };
  std::vector<size_t> w = widths();
  if (st.fit && total(w) > st.width) {
    // First the short forms (a UUID prefix or a bus id names the GPU as well), then the widest columns.
    for (auto& r : rows)
      for (std::string& cell : r) cell = short_cell(cell);
    w = widths();
    if (total(w) > st.width) gap = 1;
    auto may_cut = [&](size_t c) {
      return fit.elastic.empty() || std::find(fit.elastic.begin(), fit.elastic.end(), headers[c]) != fit.elastic.end();
    };
    size_t keep = column(fit.keep);
    auto floor = [&](size_t c, bool spare_keep) {
      size_t f = std::max<size_t>(display_width(headers[c]), 6);
      return c == keep && spare_keep ? std::max(f, fit.keep_width) : f;
    };
    auto cut = [&](bool spare_keep) {
      while (total(w) > st.width) {
        size_t widest = w.size();
        for (size_t c = 0; c < w.size(); ++c)
          if (may_cut(c) && w[c] > floor(c, spare_keep) && (widest == w.size() || w[c] > w[widest])) widest = c;
        if (widest == w.size()) return;  // nothing left to shorten
        --w[widest];
      }
    };
    cut(true);
    for (const std::string& name : fit.droppable) {  // then columns go, before `keep` is cut further
      if (total(w) <= st.width) break;
      size_t c = column(name);
      if (c >= headers.size()) continue;
      headers.erase(headers.begin() + static_cast<long>(c));
      w.erase(w.begin() + static_cast<long>(c));
      for (auto& r : rows)
        if (c < r.size()) r.erase(r.begin() + static_cast<long>(c));
      keep = column(fit.keep);
      w = widths();  // what was cut for the dropped column's sake may be whole again
      cut(true);
    }
    cut(false);  // the terminal wraps what is left
    for (auto& r : rows)
      for (size_t c = 0; c < r.size() && c < w.size(); ++c) r[c] = ellipsize_cell(r[c], w[c]);
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < w.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      s += cell;
      if (c + 1 < w.size()) s += std::string(w[c] - display_width(cell) + gap, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(headers);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string render_finding(const Finding& f, const std::string& where, const TermStyle& st) {
  std::string tag = "[" + std::string(severity_name(f.severity)) + "]";
  std::string head = tag + " " + f.id + (where.empty() ? "" : " (" + printable(where) + ")") + ": " + printable(f.message);
  std::string text = st.fit ? wrap(head, st.width, 2, 6) : "  " + head;
  text.replace(2, tag.size(), colored(tag, severity_name(f.severity), st));
  std::string out = text + "\n";
  // The findings of the same cause, as its evidence (findings/fold.h): said once, under the cause.
  for (const FoldedFinding& a : f.also) {
    std::string line = "also " + a.id + ": " + printable(a.message);
    out += (st.fit ? wrap(line, st.width, 6, 8) : "      " + line) + "\n";
  }
  if (!f.fix.empty()) out += "      fix: " + printable(f.fix) + "\n";  // never wrapped: it is pasted
  // A note's command (an export, a relaunch line) is never broken: pasted, it must stay one line.
  if (!f.note.empty()) out += (st.fit ? wrap("note: " + printable(f.note), st.width, 6, 8, true) : "      note: " + printable(f.note)) + "\n";
  return out;
}

std::string render_findings(const std::vector<Finding>& fs, const TermStyle& st) {
  if (fs.empty()) return "";
  std::string out = "\nFindings:\n";
  for (const Finding& f : fs) out += render_finding(f, "", st);
  return out;
}

std::string memory_cell(const Gpu& g) {
  if (!g.memory_total_mib) return "N/A";
  return na(g.memory_used_mib) + " / " + std::to_string(*g.memory_total_mib) + " MiB";
}

std::string memory_cell(const Snapshot& s, const std::string& uuid) {
  Snapshot::DeviceRef d = s.find_device(nvml_uuid_for(s, uuid));
  if (!d.mig) return d.gpu ? memory_cell(*d.gpu) : "N/A";
  if (!d.mig->memory_total_mib) return "N/A";
  return na(d.mig->memory_used_mib) + " / " + std::to_string(*d.mig->memory_total_mib) + " MiB";
}

std::string device_name(const Snapshot& s, const std::string& uuid) {
  Snapshot::DeviceRef d = s.find_device(nvml_uuid_for(s, uuid));
  if (d.mig) return d.mig->name.empty() ? d.gpu->name + " MIG" : d.mig->name;
  return d.gpu ? d.gpu->name : "?";
}

std::string fit_line(const std::string& raw, const TermStyle& st) {
  std::string line = printable(raw);  // lines quote variables, paths and driver strings
  if (!st.fit) return line + "\n";
  size_t lead = std::min(line.find_first_not_of(' '), line.size());  // keep the line's own indent
  return wrap(line.substr(lead), st.width, lead, lead + 2, true) + "\n";  // a command in it stays whole
}

std::string fit_lines(const std::string& text, const TermStyle& st) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    out += line.empty() ? "\n" : fit_line(line, st);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

std::string host_banner(const Snapshot& s, const TermStyle& st) {
  // A container what-if (resolve/container_view.h) appends ", inside a container ..." to the source.
  size_t what_if = s.source.find(", inside a container");
  std::string origin = s.source.substr(0, what_if);
  if (st.fit && origin.rfind('/') != std::string::npos) origin = "simulated host " + origin.substr(origin.rfind('/') + 1);
  std::string b = s.simulated ? "SIMULATED host (" + origin.substr(std::min(origin.size(), std::string("simulated host ").size())) + ")"
                              : "this host";
  b += ", driver " + s.driver_version.value_or("N/A");
  if (s.cuda_driver_version)
    b += ", CUDA " + std::to_string(*s.cuda_driver_version / 1000) + "." +
         std::to_string(*s.cuda_driver_version % 1000 / 10);
  b += ", " + std::to_string(s.gpus.size()) + " GPU" + (s.gpus.size() == 1 ? "" : "s");
  std::string out = fit_line(printable(b), st);
  if (what_if != std::string::npos) out += fit_line(printable("PREDICTED: the view" + s.source.substr(what_if + 1)), st);
  // Finding minor-differs-from-index: say it wherever the host is shown, since Slurm's File=/IDX,
  // dcgm-exporter's job files and device cgroups count minors, not these indices.
  std::string minors;
  for (const Gpu& g : s.gpus)
    if (g.minor_number && *g.minor_number != g.nvml_index)
      minors += std::string(minors.empty() ? "" : ", ") + "GPU " + std::to_string(g.nvml_index) + " is /dev/nvidia" +
                std::to_string(*g.minor_number);
  if (!minors.empty())
    out += fit_line(printable("Minor numbers differ from nvidia-smi indices here: " + minors +
                              " (Slurm's IDX and dcgm-exporter's job files count minors)"), st);
  return out;
}

}  // namespace gpumap
