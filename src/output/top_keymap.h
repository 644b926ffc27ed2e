// The key tables of `gpumap top`'s two screens: each row a key (or keys), the command it gives
// and its help text.  The help screens (output/top_view.h, output/fleet_top_view.h) and
// docs/top.md's key list are made from them (a test checks the docs); top/top_keys.cc does what
// each command says, so a key is added in one row and one handler.
#pragma once
#include <vector>

#include "output/screen_kit.h"

namespace gpumap {

/// What a key of the host's screen asks for.
enum class TopCommand {
  kQuit, kHelp, kSelect, kPage, kScrollCommand, kDetail, kEnviron, kSort, kFilter, kTree, kCompact, kInfo, kSignal, kTag,
  kPace, kBack,
  kSuspend,  // Ctrl-Z: the loop's (top/top_app.cc)
};
/// The host's keys, in the help screen's order.
const std::vector<KeyBinding<TopCommand>>& top_keymap();

/// What a key of the fleet's screen (`top --prometheus`) asks for.
enum class FleetTopCommand { kQuit, kHelp, kSelect, kPage, kExpand, kFold, kExpandAll, kSort, kReverse, kFilter, kPace, kBack, kNotHere };
/// The fleet's keys, in the help screen's order.
const std::vector<KeyBinding<FleetTopCommand>>& fleet_top_keymap();

}  // namespace gpumap
