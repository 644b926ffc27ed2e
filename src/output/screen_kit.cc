#include "output/screen_kit.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "model/text.h"
#include "output/style.h"

namespace gpumap {

std::string top_fit(const std::string& s, size_t w, bool right) {
  std::string t = display_width(s) > w ? ellipsize(s, w) : s;
  std::string pad(w - std::min(w, display_width(t)), ' ');
  return right ? pad + t : t + pad;
}

/// The words that fit and "…" (ellipsize when not even the first word fits).
std::string top_cut_at_word(const std::string& text, size_t cells) {
  if (display_width(text) <= cells) return text;
  if (cells == 0) return "";
  std::string t = ellipsize(text, cells);
  size_t space = t.find_last_of(' ', t.size() - 1);
  while (space != std::string::npos && space > 0 && t[space - 1] == ' ') --space;
  if (space == std::string::npos || space == 0) return t;
  return t.substr(0, space) + "…";
}

std::string top_skip_cells(const std::string& s, size_t cells) {
  if (!cells) return s;
  size_t i = 0, cut = 0;
  while (cut < cells && i < s.size()) cut += next_char_cells(s, &i);
  return std::string(cut > cells ? cut - cells : 0, ' ') + s.substr(i);
}

TopLineBuilder& TopLineBuilder::add(const std::string& text, TopAttr a) {
  if (used >= width || text.empty()) return *this;
  std::string t = display_width(text) > width - used ? ellipsize(text, width - used) : text;
  used += display_width(t);
  line.push_back({t, a});
  return *this;
}

TopLineBuilder& TopLineBuilder::words(const std::string& text, TopAttr a) {
  return add(top_cut_at_word(text, width > used ? width - used : 0), a);
}

std::string top_clock_text(int64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  struct tm tm {};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string top_seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 && s != static_cast<int>(s) ? "%.2gs" : "%.0fs", s);
  return buf;
}

/// LANG=C, the Linux console: "…" becomes "~", any other non-ASCII character "?" once per cell
/// it took (a wide one "??", so the layout holds).
void top_asciify(std::vector<TopLine>& lines) {
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

TopAttr top_severity_attr(Severity s) {
  return s == Severity::kError ? TopAttr::kBad : s == Severity::kWarning ? TopAttr::kWarn : TopAttr::kInfo;
}

// --- keys ----------------------------------------------------------------------------------------

std::vector<TopLine> key_help_lines(const std::string& title, const std::vector<KeyHelp>& rows, size_t width) {
  std::vector<TopLine> out;
  out.push_back(TopLineBuilder{width}.add(title, TopAttr::kBold).done());
  out.push_back({});
  for (const KeyHelp& k : rows) {
    if (k.help.empty()) continue;  // the docs' only
    std::vector<std::string> text = split(wrap(k.help, std::max<size_t>(width, 40), 22, 22).substr(22), '\n');
    out.push_back(TopLineBuilder{width}.add(top_fit(k.label, 21) + " ", TopAttr::kHeader).add(text[0]).done());
    for (size_t i = 1; i < text.size(); ++i) out.push_back(TopLineBuilder{width}.add(text[i]).done());
  }
  return out;
}

std::string key_help_markdown(const KeyHelp& row) {
  std::string label;
  for (const std::string& k : split(row.label, ',')) {
    std::string t = trim(k);
    label += (label.empty() ? "" : ", ") + (t.size() == 1 ? "`" + t + "`" : t);
  }
  return "| " + label + " | " + row.doc + " |";
}

// --- the footer and the frame's end --------------------------------------------------------------

std::vector<TopSpan> filter_prompt_spans(const std::string& typed) {
  return {{"filter: ", TopAttr::kBold}, {printable(typed) + "_", TopAttr::kNormal},
          {"  (Enter applies, Esc clears)", TopAttr::kDim}};
}

TopLine footer_line(const std::vector<TopSpan>& spans, const std::string& filter_value, size_t width) {
  std::string filter = filter_value.empty() ? "" : "  filter: " + printable(filter_value);
  // The filter first: what precedes it gives way (cut at words) until it fits.
  size_t room = width > display_width(filter) ? width - display_width(filter) : 0;
  TopLineBuilder b{width};
  size_t used = 0;
  for (const TopSpan& sp : spans) {
    std::string t = sp.text;
    if (used + display_width(t) > room) t = top_cut_at_word(t, room > used ? room - used : 0);
    used += display_width(t);
    b.add(t, sp.attr);
  }
  if (!filter.empty()) b.add(display_width(filter) > width ? top_cut_at_word(filter, width) : filter, TopAttr::kWarn);
  return b.done();
}

void pad_frame(std::vector<TopLine>& out, size_t height, size_t reserved) {
  if (height)
    while (out.size() + reserved < height) out.push_back({});
}

void finish_frame(std::vector<TopLine>& out, size_t height, TopLine footer) {
  if (!height) return;
  pad_frame(out, height, 1);
  out.resize(height - 1);
  out.push_back(std::move(footer));
}

// --- the table's window --------------------------------------------------------------------------

void keep_selection(size_t& selected, size_t& scroll, size_t rows, size_t page) {
  if (rows == 0) {
    selected = scroll = 0;
    return;
  }
  selected = std::min(selected, rows - 1);
  page = std::max<size_t>(page, 1);
  if (selected < scroll) scroll = selected;
  if (selected >= scroll + page) scroll = selected + 1 - page;
  scroll = std::min(scroll, rows > page ? rows - page : 0);
}

TableWindow table_window(size_t rows, size_t selected, size_t scroll, size_t room) {
  TableWindow w;
  // Rows left off are said on the room's last line, when there are two lines or more to share.
  size_t page = room;
  if (rows > room && room >= 2) {
    page = room - 1;
    w.more_line = true;
  }
  w.selected = selected;
  w.first = scroll;
  keep_selection(w.selected, w.first, rows, page);
  w.shown = std::min(page, rows - std::min(rows, w.first));
  w.above = w.first;
  w.below = rows - w.first - w.shown;
  return w;
}

TopLine more_rows_line(const TableWindow& w, bool utf8, size_t width) {
  std::string s = "  ";
  if (w.above) s += std::string(utf8 ? "↑ " : "^ ") + std::to_string(w.above) + " more";
  if (w.below) s += std::string(w.above ? "  " : "") + (utf8 ? "↓ " : "v ") + std::to_string(w.below) + " more";
  return TopLineBuilder{width}.add(s + "  (PgUp/PgDn, Home/End)", TopAttr::kDim).done();
}

}  // namespace gpumap
