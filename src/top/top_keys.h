// `gpumap top`'s keys: what each does to the view (output/top_view.h TopView), as a pure
// function of the key, the view and the frame on screen, so every key is tested without a
// terminal.  Which key gives which command is each screen's key table (output/top_keymap.h);
// here is what each command does.  The terminal (top/screen.h) turns its key codes into TopKey
// (output/screen_kit.h).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "output/fleet_top_view.h"
#include "output/top_keymap.h"
#include "output/top_view.h"

namespace gpumap {

/// What the loop must do after a key.
struct TopAction {
  enum Kind { kNone, kQuit, kReadNow, kSignal, kEnviron };
  TopAction() = default;
  TopAction(Kind k, uint32_t p = 0, int s = 0) : kind(k), pid(p), signal(s) {}  // NOLINT: {TopAction::kQuit} reads well
  Kind kind = kNone;
  uint32_t pid = 0;  // kSignal, kEnviron: the process, as this machine's /proc names it
  int signal = 0;
  std::vector<uint32_t> pids;  // kSignal to the tagged processes: each (pid is 0)
};

/// Applies `key` to `view`.  `page` is how many table rows the screen shows (PgUp/PgDn).
TopAction top_key(TopView& view, int key, const TopFrame& frame, size_t page);

/// The fleet view's keys (`top --prometheus`): top's keys that apply keep their meaning (quit,
/// help, select, sort, reverse, filter, pause, faster/slower); Enter/Right expand the selected
/// node, Left folds it, e expands or folds them all; top's keys that do not apply (t, c, k, i)
/// say why in the footer.  `page` is how many table rows the screen shows.
TopAction fleet_top_key(FleetTopView& view, int key, const FleetTopFrame& frame, size_t page);

/// Keeps the selection on the table and scrolled into a page of `page` rows (after a new frame
/// or a resize).
/// (The fleet's: output/screen_kit.h's keep_selection on its selected and scroll.)
void keep_selection(TopView& view, size_t rows, size_t page);

}  // namespace gpumap
