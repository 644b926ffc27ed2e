// The screen kit: the pieces both `gpumap top` screens (the host's, output/top_view.h, and the
// fleet's, output/fleet_top_view.h) draw with, so neither writes them again: styled lines and
// their builder, cells cut or padded to a width, bars and sparklines, the keys' codes and key
// tables (key, what it does, its help text) from which the help screen and docs/top.md are
// made, the footer with its filter and the filter prompt, the table's window (scrolling, the
// selection always on screen, how many rows are above and below), and the frame's end (padding,
// footer).  Pure functions of values: the terminal (src/top/) only paints the lines.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "findings/severity.h"

namespace gpumap {

/// How a span is drawn.  The terminal maps each to a colour pair or an attribute; monochrome
/// terminals and NO_COLOR keep only bold, reverse and dim.
enum class TopAttr : uint8_t { kNormal, kBold, kDim, kHeader, kSelected, kGood, kWarn, kBad, kInfo };

struct TopSpan {
  std::string text;  // UTF-8, no control characters
  TopAttr attr = TopAttr::kNormal;
};
using TopLine = std::vector<TopSpan>;

/// Builds one line of spans, cut at `width` columns (with "…").
struct TopLineBuilder {
  explicit TopLineBuilder(size_t w) : width(w) {}
  size_t width;
  TopLine line;
  size_t used = 0;
  TopLineBuilder& add(const std::string& text, TopAttr a = TopAttr::kNormal);
  /// A message: cut at a word (with "…") when it does not fit what is left of the line.
  TopLineBuilder& words(const std::string& text, TopAttr a = TopAttr::kNormal);
  TopLine done() { return std::move(line); }
};

/// `s` cut or padded to exactly `w` columns (left-aligned, or right-aligned when `right`).
std::string top_fit(const std::string& s, size_t w, bool right = false);
/// `text` cut to at most `cells` columns at a word, with "…".
std::string top_cut_at_word(const std::string& text, size_t cells);
/// `s` without its first `cells` columns (a wide character cut in two leaves a space for its half).
std::string top_skip_cells(const std::string& s, size_t cells);
/// "14:02:09" (local time), for the title line.
std::string top_clock_text(int64_t unix_ms);
/// "2s", "0.5s": the refresh interval as the title says it.
std::string top_seconds_text(double s);
/// Every line in ASCII for a terminal that cannot show UTF-8 ("…" becomes "~", others "?").
void top_asciify(std::vector<TopLine>& lines);
/// The lines as plain text (one per line, trailing spaces dropped), with ANSI colours when `color`.
std::string top_text(const std::vector<TopLine>& lines, bool color);
/// A bar of `width` cells filled to `percent` (block eighths in UTF-8, '|' in ASCII).
std::string top_bar(std::optional<uint32_t> percent, size_t width, bool utf8);
/// The last `width` samples (255: unknown) as a sparkline, right-aligned.
std::string top_sparkline(const std::deque<uint8_t>& samples, size_t width, bool utf8);
/// A finding's severity as it is drawn: error red, warning yellow, info cyan.
TopAttr top_severity_attr(Severity s);

// --- keys ----------------------------------------------------------------------------------------

/// Keys beyond plain characters (which are their own code).  The terminal (top/screen.h) turns
/// its key codes into these.
enum TopKey : int {
  kKeyUp = 0x10000, kKeyDown, kKeyPageUp, kKeyPageDown, kKeyHome, kKeyEnd, kKeyLeft, kKeyRight,
  kKeyEnter, kKeyEscape, kKeyBackspace, kKeyResize, kKeyCtrlC, kKeyWheelUp, kKeyWheelDown,
  kKeyClick = 0x20000,  // a click on the screen's line 0; on line N: top_click_key(N)
};
/// The key of a click on screen line `line`; top_clicked_line reads it back (nullopt: not a click).
constexpr int top_click_key(size_t line) { return kKeyClick + static_cast<int>(line < 0xffff ? line : 0xffff); }
constexpr std::optional<size_t> top_clicked_line(int key) {
  return key >= kKeyClick && key < kKeyClick + 0x10000 ? std::optional<size_t>(static_cast<size_t>(key - kKeyClick))
                                                     : std::nullopt;
}

/// One row of a screen's key table: the keys, what they do (the screen's own command), and how
/// the help screen and docs/top.md say it.  `help` null: a key the loop handles (Ctrl-Z), in the
/// docs only; `doc` null: the docs say `help`.
template <typename Command>
struct KeyBinding {
  std::vector<int> keys;
  const char* label;  // "PgUp, PgDn, Home, End"
  const char* help;   // the help screen's words
  const char* doc;    // docs/top.md's words (null: `help`)
  Command command;
};

/// The row of `table` that binds `key`; null when none does.
template <typename Command>
const KeyBinding<Command>* find_key(const std::vector<KeyBinding<Command>>& table, int key) {
  for (const KeyBinding<Command>& b : table)
    for (int k : b.keys)
      if (k == key) return &b;
  return nullptr;
}

/// One help row: the keys' label and the words.
struct KeyHelp {
  std::string label, help, doc;
};
template <typename Command>
std::vector<KeyHelp> key_help(const std::vector<KeyBinding<Command>>& table) {
  std::vector<KeyHelp> out;
  for (const KeyBinding<Command>& b : table)
    out.push_back({b.label, b.help ? b.help : "", b.doc ? b.doc : b.help ? b.help : ""});
  return out;
}

/// The help screen: the title, a blank line, then each row with a help text (labels in a column
/// of 21 cells, the words wrapped beside them).
std::vector<TopLine> key_help_lines(const std::string& title, const std::vector<KeyHelp>& rows, size_t width);
/// A row as docs/top.md's key table writes it: "| `q`, Ctrl-C | quit ... |" (single characters
/// in backticks, names of keys as they are).
std::string key_help_markdown(const KeyHelp& row);

// --- the footer and the frame's end --------------------------------------------------------------

/// The filter prompt: "filter: TYPED_  (Enter applies, Esc clears)".
std::vector<TopSpan> filter_prompt_spans(const std::string& typed);
/// The footer: `spans` (a prompt, a message or the keys), then the active filter (`filter`, ""
/// for none) always: what precedes it is cut at words until the filter fits.
TopLine footer_line(const std::vector<TopSpan>& spans, const std::string& filter, size_t width);
/// The end of a frame of `height` lines (0: --once, nothing to do): blank lines to the footer,
/// then the footer as the last line.
void finish_frame(std::vector<TopLine>& out, size_t height, TopLine footer);
/// Pads `out` with blank lines until `reserved` more lines fill it to `height` (0: nothing).
void pad_frame(std::vector<TopLine>& out, size_t height, size_t reserved);

// --- the table's window --------------------------------------------------------------------------

/// Keeps `selected` on a table of `rows` rows and scrolled into a page of `page` rows.
void keep_selection(size_t& selected, size_t& scroll, size_t rows, size_t page);

/// Which rows of a table of `rows` rows a screen with room for `room` lines shows: from `first`,
/// `shown` of them, the selection among them; `above` and `below` are the rows left off, said on
/// a line of their own (`more_line`) when any are.
struct TableWindow {
  size_t first = 0, shown = 0, selected = 0;
  size_t top_line = 0;  // the screen line of the first row shown (a click there selects it)
  size_t above = 0, below = 0;
  bool more_line = false;  // the last line of the room says how many rows are off screen
};
/// The window for `selected` and `scroll` (the view's), kept so the selection is on screen.
TableWindow table_window(size_t rows, size_t selected, size_t scroll, size_t room);
/// "↑ 3 more  ↓ 1 more  (PgUp/PgDn)" ("^ 3 more  v 1 more" in ASCII).
TopLine more_rows_line(const TableWindow& w, bool utf8, size_t width);

}  // namespace gpumap
