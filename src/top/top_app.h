// `gpumap top`'s loop: a reader thread reads frames (a hung driver never holds the screen: the
// drawing goes on and says the data is stale), the terminal shows them and takes keys.
#pragma once
#include <functional>
#include <string>

#include "answer/top_answer.h"
#include "output/top_view.h"
#include "top/top_keys.h"

namespace gpumap {

struct TopOptions {
  TopView view;        // the start: interval, sort, filter, tree, info
  bool color = true;   // colours where the terminal has them (false: NO_COLOR)
};

/// Runs the full-screen view until quit; returns the exit code.  `read` makes one frame on a
/// fresh session; it runs on its own thread, one read at a time.
int run_top(const TopOptions& options, const std::function<TopFrame()>& read);

/// Sends the signal of `action` (TopAction::kSignal, confirmed) to its pid, only when that pid is
/// still the process `frame` showed: the same start time (/proc/PID/stat field 22), owner and
/// command, checked while the process is held by a pidfd.  Returns the words for the status line.
std::string signal_shown_process(const TopFrame& frame, const TopAction& action);

/// One frame as text (`top --once`): `width` columns, every GPU and process.
std::string top_once(const TopFrame& frame, const TopView& view, size_t width, bool color);

}  // namespace gpumap
