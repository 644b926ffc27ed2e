// `gpumap top`'s loop: a reader thread reads frames (a hung driver never holds the screen: the
// drawing goes on and says the data is stale), the terminal shows them and takes keys.
#pragma once
#include <functional>
#include <string>

#include "answer/fleet_answer.h"
#include "answer/top_answer.h"
#include "output/fleet_top_view.h"
#include "output/top_view.h"
#include "top/top_keys.h"

namespace gpumap {

struct TopOptions {
  TopView view;        // the start: interval, sort, filter, tree, info
  bool color = true;   // colours where the terminal has them (false: NO_COLOR)
};

/// The host's screen between two keys: what the person asked for, and what the last drawing
/// showed of the table (PgUp/PgDn move by that many rows).
struct TopScreenState {
  TopView view;
  size_t page = 1;
  size_t shown_first = 0, shown_rows = 0;  // the table rows the last drawing showed
  size_t top_line = 0;                     // the screen line of the first
};

/// Draws `frame` as the live view does (the selection kept on the table), remembering what the
/// table showed.
std::vector<TopLine> draw_top_screen(TopScreenState& s, const TopFrame& frame, const TopHistory& history,
                                     const TopStatus& status, size_t width, size_t height);

/// A key on the screen last drawn (top/top_keys.h's top_key with the rows it showed).
TopAction press_top_key(TopScreenState& s, int key, const TopFrame& frame);

/// Runs the full-screen view until quit; returns the exit code.  `read` makes one frame on a
/// fresh session; it runs on its own thread, one read at a time.
int run_top(const TopOptions& options, const std::function<TopFrame()>& read);

struct FleetTopOptions {
  FleetTopView view;  // the start: interval, sort, filter
  bool color = true;
};

/// The fleet's live view (`top --prometheus URL`) until quit; returns the exit code.  `read` asks
/// Prometheus once (session/fleet.h's read_fleet: every query bounded by its timeout) and throws
/// Error when it cannot.  Every read runs on the reader thread, the first too: until it answers
/// the screen says it is asking and `q` quits (exit 0).  When the first read fails, the screen is
/// restored and its error thrown, so an unreachable Prometheus at start is `gpumap fleet`'s
/// error and exit code; a later failure is said on the screen with the age of the last good
/// answer while the reads go on.
int run_fleet_top(const FleetTopOptions& options, const std::function<FleetAnswer()>& read);

/// One read for the fleet's view: `last` with the new answer (read at `now_unix_ms`; 0: the
/// clock's now), or, when `read` throws, `last`'s answer kept with the error and when it came.
FleetTopFrame read_fleet_top_frame(const FleetTopFrame& last, const std::function<FleetAnswer()>& read, int64_t now_unix_ms);

/// One fleet frame as text (`top --prometheus URL --once`): every node expanded, every cause.
std::string fleet_top_once(const FleetAnswer& answer, FleetTopView view, size_t width, bool color);

/// Sends the signal of `action` (TopAction::kSignal, confirmed) to its pid, only when that pid is
/// still the process `frame` showed: the same start time (/proc/PID/stat field 22), owner and
/// command, checked while the process is held by a pidfd.  Returns the words for the status line.
std::string signal_shown_process(const TopFrame& frame, const TopAction& action);

/// Reads the environment of `pid` (the process `frame` showed: the same start time) into the
/// environment screen of `view`, or says why not.
void read_shown_environ(const TopFrame& frame, uint32_t pid, TopView& view);

/// Sends the signal of `action` to each of its tagged pids, each checked as signal_shown_process
/// checks one; the words for the status line.
std::string signal_tagged(const TopFrame& frame, const TopAction& action);

/// One frame as text (`top --once`): `width` columns, every GPU and process.
std::string top_once(const TopFrame& frame, const TopView& view, size_t width, bool color);

}  // namespace gpumap
