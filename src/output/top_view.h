// `gpumap top`'s screen as a pure function: a frame (answer/top_answer.h), its history, what the
// person asked for (sort, filter, tree, detail...) and a size give the lines to draw, each a run
// of styled spans.  The terminal front end (src/top/) only paints them; `top --once` prints them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "answer/top_answer.h"

namespace gpumap {

/// How a span is drawn.  The terminal maps each to a colour pair or an attribute; monochrome
/// terminals and NO_COLOR keep only bold, reverse and dim.
enum class TopAttr : uint8_t { kNormal, kBold, kDim, kHeader, kSelected, kGood, kWarn, kBad, kInfo };

struct TopSpan {
  std::string text;  // UTF-8, no control characters
  TopAttr attr = TopAttr::kNormal;
};
using TopLine = std::vector<TopSpan>;

/// The process table's columns, in order; each can be the sort key.
enum class TopColumn { kPid, kUser, kGpu, kCuda, kMemory, kUtil, kJob, kRank, kCommand };
inline constexpr TopColumn kTopColumns[] = {TopColumn::kPid,    TopColumn::kUser, TopColumn::kGpu,
                                            TopColumn::kCuda,   TopColumn::kMemory, TopColumn::kUtil,
                                            TopColumn::kJob,    TopColumn::kRank,   TopColumn::kCommand};
/// "PID", "USER", "GPU", "CUDA", "MEM", "SM%", "JOB", "RANK", "COMMAND".
const char* top_column_name(TopColumn c);

/// What the person sees and has asked for.  Changed by the keys (src/top/top_keys.h).
struct TopView {
  enum class Screen { kMain, kHelp, kDetail };
  enum class Prompt { kNone, kFilter, kSignal };
  Screen screen = Screen::kMain;
  TopColumn sort = TopColumn::kGpu;
  bool reverse = false;
  std::string filter;          // "user:NAME", "gpu:N", "job:ID", "pid:N", else text in the command
  bool tree = false;           // processes under their parents
  bool show_info = false;      // info findings shown (hidden by default)
  bool paused = false;         // no new reads; the last frame stays
  double interval_s = 1.0;     // seconds between reads
  size_t selected = 0;         // position in top_rows()
  size_t scroll = 0;           // first row shown
  uint32_t detail_pid = 0;     // Screen::kDetail: the process (NVML's pid)
  size_t detail_scroll = 0;    // its first line shown
  size_t detail_hscroll = 0;   // columns scrolled right (fixes are never wrapped)
  Prompt prompt = Prompt::kNone;
  std::string typed;           // Prompt::kFilter: what is typed so far
  uint32_t signal_pid = 0;     // Prompt::kSignal: the process (its pid here) and the signal asked
  int signal = 15;
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

/// Whether `filter` is one top understands; the error names the filter and the forms otherwise.
std::optional<std::string> top_filter_error(const std::string& filter);

/// The whole screen: `height` lines of at most `width` columns (height 0: as many lines as the
/// frame needs, for `top --once`).  The frame may be the last good one while a read hangs: the
/// status line says how old it is.
std::vector<TopLine> render_top(const TopFrame& frame, const TopHistory& history, const TopView& view,
                                const TopStatus& status, size_t width, size_t height);

/// One process in detail (top's Enter screen, `gpumap ps --pid N`): its GPUs with memory and the
/// cuda:N it calls each, the CUDA variables it started with, its own cuda:N map, every finding
/// on it with its fix.  Lines are never wrapped past `width` except messages (fixes stay whole, to
/// be pasted).  `snapshot` may be null (the map then says unknown).
std::vector<TopLine> process_detail(const Snapshot* snapshot, const PsResult& result, uint32_t pid, size_t width);

/// The lines as plain text (one per line, trailing spaces dropped), with ANSI colours when `color`.
std::string top_text(const std::vector<TopLine>& lines, bool color);

/// A bar of `width` cells filled to `percent` (block eighths in UTF-8, '|' in ASCII).
std::string top_bar(std::optional<uint32_t> percent, size_t width, bool utf8);
/// The last `width` samples (255: unknown) as a sparkline, right-aligned.
std::string top_sparkline(const std::deque<uint8_t>& samples, size_t width, bool utf8);

}  // namespace gpumap
