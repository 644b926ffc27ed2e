// `gpumap top`'s loop: a reader thread reads frames (a hung driver never holds the screen: the
// drawing goes on and says the data is stale), the terminal shows them and takes keys.
#pragma once
#include <functional>
#include <string>

#include "answer/top_answer.h"
#include "output/top_view.h"

namespace gpumap {

struct TopOptions {
  TopView view;        // the start: interval, sort, filter, tree, info
  bool color = true;   // colours where the terminal has them (false: NO_COLOR)
};

/// Runs the full-screen view until quit; returns the exit code.  `read` makes one frame on a
/// fresh session; it runs on its own thread, one read at a time.
int run_top(const TopOptions& options, const std::function<TopFrame()>& read);

/// One frame as text (`top --once`): `width` columns, every GPU and process.
std::string top_once(const TopFrame& frame, const TopView& view, size_t width, bool color);

}  // namespace gpumap
