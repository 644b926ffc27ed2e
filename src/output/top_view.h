// `gpumap top`'s screen as a pure function: a frame (answer/top_answer.h), its history, what the
// person asked for (sort, filter, tree, detail...) and a size give the lines to draw, each a run
// of styled spans (output/screen_kit.h: the pieces it shares with the fleet's screen).  The terminal
// front end (src/top/) only paints them; `top --once` prints them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "answer/top_answer.h"
#include "output/screen_kit.h"

namespace gpumap {

/// The process table's columns, in order (top_columns() has one row for each).
enum class TopColumn { kPid, kUser, kGpu, kCuda, kMemory, kUtil, kCpu, kRss, kTime, kJob, kRank, kCommand };

/// A column's sort key: known values in order of `number` (or of the cell's text when the column
/// sorts as text); unknown ones ("-") last whichever way the table is sorted.
struct TopSortKey {
  bool known = true;
  double number = 0;
};

/// One column of the process table.  Everything about a column is its row in top_columns():
/// adding a column is one row there (and its test), nothing else (docs/top.md).
struct TopColumnSpec {
  TopColumn id;
  const char* header;  // "SM%"
  const char* name;    // its word for --sort (and the filter when `filter` is set): "sm"
  size_t width;        // cells (COMMAND: 0, it takes what is left)
  bool right;          // right-aligned (numbers)
  bool largest_first;  // sorts largest first, as htop and nvitop sort resources (r reverses)
  int drop;            // 0: always shown; else the column gives way to the command on a narrow
                       // terminal, highest first: with no value in any row while the command is
                       // cut, any while it would get fewer than 16 cells (never the sort column)
  /// The cell; `use` is the process's host use (null: unknown).
  std::string (*value)(const ProcessRow& row, const ProcessHostUse* use);
  /// The sort key; null: the column sorts by its cell's text.
  TopSortKey (*sort)(const ProcessRow& row, const ProcessHostUse* use);
  /// Whether `name:VALUE` (the filter) matches the row; null: the column has no filter.
  bool (*filter)(const ProcessRow& row, const std::string& value);
};
/// The columns, in the table's order.
const std::vector<TopColumnSpec>& top_columns();
const TopColumnSpec& top_column(TopColumn c);
/// "PID", "USER", "GPU", "CUDA", "MEM", "SM%", "CPU%", "RSS", "TIME", "JOB", "RANK", "COMMAND".
const char* top_column_name(TopColumn c);
/// The column --sort NAME names (its word or its header, any case); nullopt otherwise.
std::optional<TopColumn> top_column_named(const std::string& name);
/// Every column's word, in order ("pid", "user", ...): for --sort's help and its error.
std::vector<std::string> top_column_words();

/// Whether the GPU lines are folded into one line per GPU when `gpus` GPUs are drawn on a screen
/// of `height` lines: when the full blocks would take more than about a third of it.
bool top_auto_compact(size_t gpus, size_t height);

/// What the person sees and has asked for.  Changed by the keys (src/top/top_keys.h).
struct TopView {
  enum class Screen { kMain, kHelp, kDetail, kEnviron };
  enum class Prompt { kNone, kFilter, kSignal };
  Screen screen = Screen::kMain;
  TopColumn sort = TopColumn::kGpu;
  bool reverse = false;
  std::string filter;          // "user:NAME", "gpu:N", "job:ID", "pid:N", else text in the command
  bool tree = false;           // processes under their parents
  bool compact_toggled = false;  // c: the GPU lines the other way than top_auto_compact() chose
  bool show_info = false;      // info findings shown (hidden by default)
  bool paused = false;         // no new reads; the last frame stays
  double interval_s = 1.0;     // seconds between reads
  size_t selected = 0;         // position in top_rows()
  size_t scroll = 0;           // first row shown
  size_t command_hscroll = 0;  // Left/Right: the command column's first cells scrolled off
  uint32_t detail_pid = 0;     // Screen::kDetail: the process (NVML's pid)
  size_t detail_scroll = 0;    // its first line shown
  size_t detail_hscroll = 0;   // columns scrolled right (fixes are never wrapped)
  Prompt prompt = Prompt::kNone;
  std::string typed;           // Prompt::kFilter: what is typed so far
  uint32_t signal_pid = 0;     // Prompt::kSignal: the process (its pid here) and the signal asked
                               // (0 with tags: every tagged process)
  std::map<uint32_t, int64_t> tagged;  // m: processes tagged for one signal, pid here -> start ticks
  std::vector<std::string> environ;    // Screen::kEnviron: detail_pid's whole environment (NAME=VALUE)
  std::string environ_note;            // why it is empty (unreadable, another process now)
  int signal = 0;              // 0: not chosen yet (t, k, h or i chooses; then y sends it)
  std::string message;         // the last action's outcome, shown in the footer
  bool utf8 = true;            // block bars and sparklines; else ASCII
};

/// What the screen says about the reading itself.
struct TopStatus {
  int64_t now_unix_ms = 0;
  bool reading = false;          // a read is under way
  int64_t reading_since_ms = 0;  // since when
};

/// One line of the process table: a process row, or (tree view) a parent that is not a GPU
/// process, with the rows under it.
struct TopRow {
  const ProcessRow* row = nullptr;  // null: a parent line
  uint32_t parent_pid = 0;          // the parent line's pid
  int depth = 0;                    // tree indent
};

/// The rows the table shows for `view` (filter, sort, tree), in order.
std::vector<TopRow> top_rows(const TopFrame& frame, const TopView& view);

/// Whether `row` is kept by `filter` (as top_rows() keeps rows: the findings of a row go with it).
bool top_row_matches(const ProcessRow& row, const std::string& filter);
/// The host use (CPU %, RSS, time) the frame read for `row`'s process; null when unknown.
const ProcessHostUse* top_host_use(const ProcessRow& row, const TopFrame& frame);

/// Whether `filter` is one top understands; the error names the filter and the forms otherwise.
std::optional<std::string> top_filter_error(const std::string& filter);

/// The whole screen: `height` lines of at most `width` columns (height 0: as many lines as the
/// frame needs, for `top --once`).  The frame may be the last good one while a read hangs: the
/// status line says how old it is.  The table shows the rows around the selection (always on
/// screen, whatever `view.scroll` says) and a line with how many are above and below; `window`
/// (when given) gets what it showed, for the keys.
std::vector<TopLine> render_top(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                const TopStatus& status, size_t width, size_t height, TableWindow* window = nullptr);

/// What a terminal under 80x24 shows instead: the size needed and this one's, wrapped at words
/// to `width` columns.
std::vector<TopLine> top_too_small(size_t width, size_t height);

/// One process in detail (top's Enter screen, `gpumap ps --pid N`): its GPUs with memory and the
/// cuda:N it calls each, the CUDA variables it started with, its own cuda:N map, every finding
/// on it with its fix.  Lines are never wrapped past `width` except messages (fixes stay whole, to
/// be pasted).  `snapshot` may be null (the map then says unknown).
std::vector<TopLine> process_detail(const Snapshot* snapshot, const PsResult& result, uint32_t pid, size_t width);

}  // namespace gpumap
