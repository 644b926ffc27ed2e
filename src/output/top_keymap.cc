#include "output/top_keymap.h"

namespace gpumap {

const std::vector<KeyBinding<TopCommand>>& top_keymap() {
  // keys, label, help (the help screen), doc (docs/top.md; null: the help), command
  static const std::vector<KeyBinding<TopCommand>> kKeys = {
      {{'q', kKeyCtrlC}, "q, Ctrl-C", "quit", "quit (the terminal is restored; also on SIGTERM, SIGHUP and a crash)",
       TopCommand::kQuit},
      {{'h', '?'}, "h, ?", "this help (any key closes it)", "the key table; any key closes it", TopCommand::kHelp},
      {{kKeyUp, kKeyDown, kKeyWheelUp, kKeyWheelDown}, "Up, Down, wheel", "select a process",
       "select a process; the table scrolls to keep the selection on screen, and a line under it says how many rows "
       "are above and below (`↑ 3 more  ↓ 1 more`, `^`/`v` in ASCII)",
       TopCommand::kSelect},
      {{kKeyClick}, "click", nullptr, "selects the row clicked (the terminal's own selection: Shift and the mouse)",
       TopCommand::kSelect},
      {{kKeyPageUp, kKeyPageDown, kKeyHome, kKeyEnd}, "PgUp, PgDn, Home, End", "a page up or down, the first, the last",
       nullptr, TopCommand::kPage},
      {{kKeyLeft, kKeyRight}, "Left, Right", "scroll the command sideways",
       "scroll the command column sideways, 8 cells a key (its header says how far: `COMMAND +8`)",
       TopCommand::kScrollCommand},
      {{kKeyEnter}, "Enter", "detail: CUDA variables, its cuda:N map, findings, fixes",
       "the process in detail: its CUDA variables (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, "
       "`NVIDIA_VISIBLE_DEVICES`, rank and Slurm ids), its own `cuda:0..` → nvidia-smi index and UUID, its findings "
       "with their fixes; fixes are never wrapped (Left/Right scroll sideways), Up/Down scroll, Esc or `q` goes back",
       TopCommand::kDetail},
      {{'e'}, "e", "its whole environment, the GPU variables marked",
       "the selected process's whole environment (`/proc/PID/environ`, read when asked), the variables gpumap "
       "reads first and marked `*`; Up/Down scroll, Left/Right shift, Esc or `q` goes back",
       TopCommand::kEnviron},
      {{'<', '>', 'r'}, "<, >, r", "sort by the column to the left / right; r reverses",
       "sort by the previous / next column (PID, USER, GPU, CUDA, MEM, SM%, CPU%, RSS, TIME, JOB, RANK, COMMAND); "
       "resources (MEM, SM%, CPU%, RSS, TIME) sort largest first, as in htop and nvitop, the others smallest first; "
       "the header's arrow points the way values go (▼ largest at the top); `r` reverses the sort",
       TopCommand::kSort},
      {{'/'}, "/",
       "filter: user:NAME, gpu:N or gpu:UUID, job:ID, pid:N, or text in the command (Enter applies, Esc clears)",
       "filter: `user:NAME` (or uid), `gpu:N` (or a UUID prefix), `job:ID`, `pid:N`, or any text of the command line "
       "or user; Enter applies, Esc clears.  The filter applies to the findings too, as `ps --user/--gpu/--pid` does: a "
       "process's own findings and the GPU findings it is part of show only while it is shown.  The footer always "
       "ends with the active filter; at 80 columns the keys or message before it are cut at a word (`…`), never the "
       "filter",
       TopCommand::kFilter},
      {{'t'}, "t", "tree: processes under their parents",
       "tree: processes under their parents (a launcher such as torchrun that holds no GPU is shown as their head)",
       TopCommand::kTree},
      {{'c'}, "c", "GPU lines: one line per GPU or the full blocks",
       "GPU lines: one line per GPU or the full blocks (the other way than top chose for the screen)",
       TopCommand::kCompact},
      {{'i'}, "i", "show or hide info findings", nullptr, TopCommand::kInfo},
      {{'k'}, "k", "signal the selected process (asks which, then y sends)",
       "send a signal to the selected process, in two steps, so no single key sends one: the footer asks "
       "`signal pid N: t TERM  k KILL  h HUP  i INT`, a letter chooses, then `send KILL to pid N? y sends it` and "
       "only `y` sends; any other key at either step sends nothing; the line above the footer names the process "
       "(`pid N  user U  COMMAND`), a row on screen (the selection never leaves it).  Sends only to the process "
       "shown: its start time "
       "(/proc/PID/stat field 22), owner and command as the frame read them, checked while it is held by a pidfd "
       "(pidfd_open, pidfd_send_signal), so a pid another process took since (one refresh, or a paused or stale "
       "frame) gets \"is another process now: nothing sent\"; a process you may not signal says so",
       TopCommand::kSignal},
      {{'m', 'M'}, "m, M", "tag the process for k (M untags all)",
       "tag the selected process (`*` before its pid) and move down; `k` then signals every tagged process at once "
       "(each checked as one signal is), the prompt counting them; `M` untags them all",
       TopCommand::kTag},
      {{' ', 'p', '+', '=', '-'}, "space, p, +, -", "pause / resume reading; refresh faster / slower",
       "pause / resume reading; read twice as often (down to 0.25 s) / half as often (up to 60 s)", TopCommand::kPace},
      {{kKeyEscape}, "Esc", "back to the main screen; clear the filter", "back to the main screen; clears the filter",
       TopCommand::kBack},
      {{26}, "Ctrl-Z", nullptr, "suspend (`fg` resumes)", TopCommand::kSuspend},
  };
  return kKeys;
}

const std::vector<KeyBinding<FleetTopCommand>>& fleet_top_keymap() {
  static const std::vector<KeyBinding<FleetTopCommand>> kKeys = {
      {{'q', kKeyCtrlC}, "q, Ctrl-C", "quit", nullptr, FleetTopCommand::kQuit},
      {{'h', '?'}, "h, ?", "this help (any key closes it)", nullptr, FleetTopCommand::kHelp},
      {{kKeyUp, kKeyDown, kKeyWheelUp, kKeyWheelDown}, "Up, Down, wheel", "select a node, a GPU or a process", nullptr,
       FleetTopCommand::kSelect},
      {{kKeyPageUp, kKeyPageDown, kKeyHome, kKeyEnd}, "PgUp, PgDn, Home, End", "a page up or down, the first, the last",
       nullptr, FleetTopCommand::kPage},
      {{kKeyEnter, kKeyRight}, "Enter, Right",
       "expand the node: its GPUs and their processes, each with its own cuda:N (Enter again folds it)", nullptr,
       FleetTopCommand::kExpand},
      {{kKeyLeft}, "Left", "fold the node", nullptr, FleetTopCommand::kFold},
      {{'e'}, "e", "expand every node, or fold them all", nullptr, FleetTopCommand::kExpandAll},
      {{'<', '>'}, "<, >", "sort the nodes by the column to the left / right", nullptr, FleetTopCommand::kSort},
      {{'r'}, "r", "reverse the sort", nullptr, FleetTopCommand::kReverse},
      {{'/'}, "/",
       "filter: node:TEXT, user:NAME, job:ID, gpu:TEXT (model, index or UUID prefix), pid:N, or text in a node's name, "
       "a user or a command (Enter applies, Esc clears)",
       nullptr, FleetTopCommand::kFilter},
      {{' ', 'p'}, "space, p", "pause / resume reading", nullptr, FleetTopCommand::kPace},
      {{'+', '=', '-'}, "+, -", "refresh faster / slower", nullptr, FleetTopCommand::kPace},
      {{kKeyEscape}, "Esc", "back to the main screen; clear the filter", nullptr, FleetTopCommand::kBack},
      {{'t', 'c', 'k', 'i'}, "t, c, k, i",
       "not in the fleet view: t (tree) and k (signal) need the node's own /proc (run gpumap top there), c has no GPU "
       "blocks to fold, i: info findings are counted, not fetched (--all lists them)",
       nullptr, FleetTopCommand::kNotHere},
  };
  return kKeys;
}

}  // namespace gpumap
