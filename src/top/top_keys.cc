#include "top/top_keys.h"

#include <algorithm>
#include <csignal>

#include "model/text.h"

namespace gpumap {

namespace {

/// The process under the selection, if the selection is on a process row.
const ProcessRow* selected_row(const TopView& view, const TopFrame& frame) {
  std::vector<TopRow> rows = top_rows(frame, view);
  if (view.selected >= rows.size()) return nullptr;
  return rows[view.selected].row;
}

size_t column_at(TopColumn c) {
  const std::vector<TopColumnSpec>& cols = top_columns();
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i].id == c) return i;
  return 0;
}

/// The filter prompt's keys, for the host's view and the fleet's: Escape or Ctrl-C clears the
/// filter, Enter applies what `error` accepts, Backspace takes a whole UTF-8 character, any other
/// character is typed (they arrive as UTF-8 bytes one at a time: the terminal does not decode
/// them).  `close` leaves the prompt.
template <typename View, typename Close, typename Check>
TopAction typed_filter_key(View& view, int key, Close close, Check error) {
  if (key == kKeyEscape || key == kKeyCtrlC) {
    close(view);
    view.typed.clear();
    view.filter.clear();
    view.message = "filter cleared";
  } else if (key == kKeyEnter) {
    if (std::optional<std::string> err = error(view.typed)) {
      view.message = *err;
      return {};
    }
    close(view);
    view.filter = view.typed;
    view.selected = view.scroll = 0;
    view.message = view.filter.empty() ? "filter cleared" : "";
  } else if (key == kKeyBackspace || key == 127 || key == 8) {
    if (!view.typed.empty()) {
      size_t i = view.typed.size() - 1;
      while (i > 0 && (static_cast<unsigned char>(view.typed[i]) & 0xC0) == 0x80) --i;
      view.typed.erase(i);
    }
  } else if (key >= 0x20 && key < 0x10000 && key != 0x7f && view.typed.size() < 200) {
    view.typed += static_cast<char>(key);
  }
  return {};
}

/// The keys of pace, the same in both views: space or p pauses and resumes, + (=) reads twice as
/// often and at once, - half as often.  Nothing for any other key.
template <typename View>
std::optional<TopAction> pace_key(View& view, int key) {
  switch (key) {
    case ' ':
    case 'p':
      view.paused = !view.paused;
      view.message = view.paused ? "paused (space resumes)" : "resumed";
      return view.paused ? TopAction{} : TopAction{TopAction::kReadNow};
    case '+':
    case '=': view.interval_s = std::max(0.25, view.interval_s / 2); view.message = "faster"; return TopAction{TopAction::kReadNow};
    case '-': view.interval_s = std::min(60.0, view.interval_s * 2); view.message = "slower"; return TopAction{};
    default: return std::nullopt;
  }
}

TopAction filter_key(TopView& view, int key) {
  return typed_filter_key(view, key, [](TopView& v) { v.prompt = TopView::Prompt::kNone; }, top_filter_error);
}

/// The signal prompt: a letter chooses the signal (t TERM, k KILL, h HUP, i INT), then y sends
/// it; any other key at either step cancels.  No single key sends a signal.
TopAction signal_key(TopView& view, int key) {
  if (!view.signal) {
    switch (key) {
      case 't': case 'T': view.signal = SIGTERM; return {};
      case 'k': case 'K': view.signal = SIGKILL; return {};
      case 'h': case 'H': view.signal = SIGHUP; return {};
      case 'i': case 'I': view.signal = SIGINT; return {};
      default: break;
    }
  } else if (key == 'y' || key == 'Y') {
    view.prompt = TopView::Prompt::kNone;
    int sig = view.signal;
    view.signal = 0;
    TopAction a{TopAction::kSignal, view.signal_pid, sig};
    if (!view.signal_pid)  // the tagged processes (the loop sends, then clears the tags)
      for (const auto& [pid, start] : view.tagged) a.pids.push_back(pid);
    return a;
  }
  view.prompt = TopView::Prompt::kNone;
  view.signal = 0;
  view.message = "no signal sent";
  return {};
}


/// What a command did: the loop's action, and whether the selection is then kept on the table
/// (the command moved it or changed the rows).
struct Done {
  TopAction action;
  bool reselect = false;
};

/// Up, Down, PgUp, PgDn, Home, End: the same in both screens.
Done move(size_t& selected, int key, size_t rows, size_t page) {
  switch (key) {
    case kKeyUp:
    case kKeyWheelUp: if (selected) --selected; break;
    case kKeyDown:
    case kKeyWheelDown: ++selected; break;
    case kKeyPageUp: selected -= std::min(selected, page); break;
    case kKeyPageDown: selected += page; break;
    case kKeyHome: selected = 0; break;
    case kKeyEnd: selected = rows ? rows - 1 : 0; break;
    default: break;
  }
  return {{}, true};
}

/// <, >: the column before or after `at` of `n`.
size_t next_column(size_t at, size_t n, int key) { return key == '<' ? (at + n - 1) % n : (at + 1) % n; }

// --- the host's screen ---------------------------------------------------------------------------

struct HostKey {
  TopView& view;
  int key;
  const TopFrame& frame;
  size_t page, rows;
  /// The process under the selection; the footer says why when there is none.
  const ProcessRow* process() {
    const ProcessRow* r = selected_row(view, frame);
    if (!r) view.message = rows ? "select a process first" : "no process to select";
    return r;
  }
};

Done open_detail(HostKey& k) {
  if (const ProcessRow* r = k.process()) {
    k.view.screen = TopView::Screen::kDetail;
    k.view.detail_pid = r->pid;
    k.view.detail_scroll = k.view.detail_hscroll = 0;
  }
  return {};
}

Done ask_signal(HostKey& k) {
  if (!k.view.tagged.empty()) {  // every tagged process: each was a row selected on screen when tagged
    k.view.prompt = TopView::Prompt::kSignal;
    k.view.signal_pid = 0;
    k.view.signal = 0;
    return {};
  }
  const ProcessRow* r = k.process();
  if (!r) return {};
  if (!r->local_pid || r->state != ProcessState::kRunning) {
    k.view.message = "pid " + std::to_string(r->pid) + " cannot be signalled from here (" +
                     (r->state == ProcessState::kRunning ? "not in this PID namespace" : process_state_name(r->state)) + ")";
  } else {
    k.view.prompt = TopView::Prompt::kSignal;
    k.view.signal_pid = *r->local_pid;
    k.view.signal = 0;  // a letter chooses it
  }
  return {};
}

/// The process's whole environment: the loop reads it (TopAction::kEnviron), this screen shows it.
Done open_environ(HostKey& k) {
  const ProcessRow* r = k.process();
  if (!r) return {};
  if (!r->local_pid) {
    k.view.message = "pid " + std::to_string(r->pid) + ": its environment is not readable from here (another PID namespace)";
    return {};
  }
  k.view.screen = TopView::Screen::kEnviron;
  k.view.detail_pid = r->pid;
  k.view.detail_scroll = k.view.detail_hscroll = 0;
  k.view.environ.clear();
  k.view.environ_note.clear();
  return {{TopAction::kEnviron, *r->local_pid}};
}

/// m tags (or untags) the selected process and moves down; M untags every one.
Done tag(HostKey& k) {
  TopView& v = k.view;
  if (k.key == 'M') {
    v.message = v.tagged.empty() ? "nothing tagged" : "every tag cleared";
    v.tagged.clear();
    return {};
  }
  const ProcessRow* r = k.process();
  if (!r) return {};
  if (!r->local_pid || r->state != ProcessState::kRunning) {
    v.message = "pid " + std::to_string(r->pid) + " cannot be tagged for a signal from here";
    return {};
  }
  if (!v.tagged.erase(*r->local_pid)) v.tagged[*r->local_pid] = r->start_ticks.value_or(-1);
  v.message = std::to_string(v.tagged.size()) + " tagged (k signals them, M untags)";
  ++v.selected;
  return {{}, true};
}

Done back(TopView& v) {
  v.screen = TopView::Screen::kMain;
  if (!v.filter.empty()) v.message = "filter cleared";
  v.filter.clear();
  return {};
}

/// What each command of the host's key table (output/top_keymap.h) does.
Done host_command(TopCommand c, HostKey& k) {
  TopView& v = k.view;
  switch (c) {
    case TopCommand::kQuit: return {{TopAction::kQuit}};
    case TopCommand::kHelp: v.screen = TopView::Screen::kHelp; return {};
    case TopCommand::kSelect:
    case TopCommand::kPage: return move(v.selected, k.key, k.rows, k.page);
    case TopCommand::kScrollCommand:
      if (k.key == kKeyLeft) v.command_hscroll -= std::min<size_t>(v.command_hscroll, 8);
      else v.command_hscroll += 8;
      return {};
    case TopCommand::kDetail: return open_detail(k);
    case TopCommand::kEnviron: return open_environ(k);
    case TopCommand::kTag: return tag(k);
    case TopCommand::kSort: {
      const std::vector<TopColumnSpec>& cols = top_columns();
      if (k.key == 'r') {
        v.reverse = !v.reverse;
        return {{}, true};
      }
      v.sort = cols[next_column(column_at(v.sort), cols.size(), k.key)].id;
      v.message = std::string("sorted by ") + top_column_name(v.sort);
      return {{}, true};
    }
    case TopCommand::kFilter: v.prompt = TopView::Prompt::kFilter; v.typed = v.filter; return {};
    case TopCommand::kTree: v.tree = !v.tree; v.message = v.tree ? "tree view" : "flat view"; return {{}, true};
    case TopCommand::kCompact: v.compact_toggled = !v.compact_toggled; return {};
    case TopCommand::kInfo:
      v.show_info = !v.show_info;
      v.message = v.show_info ? "info findings shown" : "info findings hidden";
      return {};
    case TopCommand::kSignal: return ask_signal(k);
    case TopCommand::kPace: return {pace_key(v, k.key).value_or(TopAction{})};
    case TopCommand::kBack: return back(v);
    case TopCommand::kSuspend: return {};  // the loop's
  }
  return {};
}

/// The detail screen's own keys (its footer says them); nullopt: the main screen's meaning.
std::optional<TopAction> detail_key(TopView& v, int key, size_t page) {
  switch (key) {
    case 'q':
    case kKeyEscape:
    case kKeyEnter: v.screen = TopView::Screen::kMain; return TopAction{};
    case kKeyUp:
    case kKeyWheelUp: if (v.detail_scroll) --v.detail_scroll; return TopAction{};
    case kKeyDown:
    case kKeyWheelDown: ++v.detail_scroll; return TopAction{};
    case kKeyPageUp: v.detail_scroll -= std::min(v.detail_scroll, page); return TopAction{};
    case kKeyPageDown: v.detail_scroll += page; return TopAction{};
    case kKeyLeft: v.detail_hscroll -= std::min<size_t>(v.detail_hscroll, 8); return TopAction{};
    case kKeyRight: v.detail_hscroll += 8; return TopAction{};
    case kKeyHome: v.detail_scroll = v.detail_hscroll = 0; return TopAction{};
    default: return std::nullopt;
  }
}

}  // namespace

void keep_selection(TopView& view, size_t rows, size_t page) { keep_selection(view.selected, view.scroll, rows, page); }

TopAction top_key(TopView& view, int key, const TopFrame& frame, size_t page) {
  if (view.prompt == TopView::Prompt::kFilter) return filter_key(view, key);
  if (view.prompt == TopView::Prompt::kSignal) return signal_key(view, key);
  if (key == kKeyCtrlC) return {TopAction::kQuit};
  if (view.screen == TopView::Screen::kHelp) {
    view.screen = TopView::Screen::kMain;
    return key == 'q' ? TopAction{TopAction::kQuit} : TopAction{};
  }
  view.message.clear();
  if (view.screen == TopView::Screen::kDetail || view.screen == TopView::Screen::kEnviron)
    if (std::optional<TopAction> a = detail_key(view, key, page)) return *a;
  HostKey k{view, key, frame, page, top_rows(frame, view).size()};
  Done done{{}, key == kKeyResize};
  if (const KeyBinding<TopCommand>* b = find_key(top_keymap(), key)) done = host_command(b->command, k);
  if (done.reselect) keep_selection(view, top_rows(frame, view).size(), page);
  return done.action;
}

namespace {

// --- the fleet's screen --------------------------------------------------------------------------

const FleetTopColumn kFleetColumns[] = {FleetTopColumn::kNode,   FleetTopColumn::kState,     FleetTopColumn::kGpus,
                                        FleetTopColumn::kMemory, FleetTopColumn::kUtil,      FleetTopColumn::kProcesses,
                                        FleetTopColumn::kFindings};

struct FleetKey {
  FleetTopView& view;
  int key;
  const FleetTopFrame& frame;
  size_t page;
  const std::vector<FleetTopRow>& rows;
  const FleetTopRow* selected() const { return view.selected < rows.size() ? &rows[view.selected] : nullptr; }
};

/// Enter, Right and Left: expand or fold the selected row's node.
Done expand_or_fold(FleetKey& k) {
  const FleetTopRow* sel = k.selected();
  FleetTopView& v = k.view;
  if (!sel) {
    v.message = "no node to select";
    return {};
  }
  const std::string& inst = sel->node->instance;
  bool open = v.expanded.count(inst) > 0;
  bool fold = k.key == kKeyLeft || (k.key == kKeyEnter && open && sel->kind == FleetTopRow::Kind::kNode);
  if (fold) {
    v.expanded.erase(inst);
    // The selection goes to the node's own row, which stays where it was.
    for (size_t i = v.selected; i-- > 0;)
      if (k.rows[i].kind == FleetTopRow::Kind::kNode && k.rows[i].node == sel->node) {
        v.selected = i;
        break;
      }
    if (sel->kind == FleetTopRow::Kind::kNode) v.message = open ? "" : "already folded";
  } else if (sel->kind == FleetTopRow::Kind::kNode) {
    v.expanded.insert(inst);
    if (sel->node->gpus.empty())
      v.message = printable(sel->node->node) + (sel->node->up ? ": no GPU reported" : ": down, no GPU known");
  }
  return {{}, true};
}

/// e: every node expanded, or (all already are) folded; the selected node stays selected.
Done expand_all(FleetKey& k) {
  FleetTopView& v = k.view;
  const FleetAnswer* a = k.frame.answer.get();
  bool all = a && std::all_of(a->nodes.begin(), a->nodes.end(), [&](const FleetNode& n) { return v.expanded.count(n.instance) > 0; });
  const FleetTopRow* sel = k.selected();
  const FleetNode* at = sel ? sel->node : nullptr;
  v.expanded.clear();
  if (!all && a)
    for (const FleetNode& n : a->nodes) v.expanded.insert(n.instance);
  v.message = all ? "every node folded" : "every node expanded";
  std::vector<FleetTopRow> now = fleet_top_rows(k.frame, v);
  for (size_t i = 0; at && i < now.size(); ++i)
    if (now[i].node == at && now[i].kind == FleetTopRow::Kind::kNode) {
      v.selected = i;
      break;
    }
  return {{}, true};
}

/// t, c, k, i: top's keys that do not apply here, each with why.
Done not_here(FleetTopView& v, int key) {
  switch (key) {
    case 't': v.message = "no tree in the fleet view: parents are in each node's /proc (gpumap top on the node)"; break;
    case 'c': v.message = "no GPU blocks to fold in the fleet view: Enter expands a node"; break;
    case 'k': v.message = "no signals from the fleet view: signal on the node itself (gpumap top there, k)"; break;
    default: v.message = "info findings are counted, not fetched: start with --all to list them"; break;
  }
  return {};
}

/// What each command of the fleet's key table (output/top_keymap.h) does.
Done fleet_command(FleetTopCommand c, FleetKey& k) {
  FleetTopView& v = k.view;
  switch (c) {
    case FleetTopCommand::kQuit: return {{TopAction::kQuit}};
    case FleetTopCommand::kHelp: v.screen = FleetTopView::Screen::kHelp; return {};
    case FleetTopCommand::kSelect:
    case FleetTopCommand::kPage: return move(v.selected, k.key, k.rows.size(), k.page);
    case FleetTopCommand::kExpand:
    case FleetTopCommand::kFold: return expand_or_fold(k);
    case FleetTopCommand::kExpandAll: return expand_all(k);
    case FleetTopCommand::kSort: {
      size_t n = std::size(kFleetColumns), at = 0;
      for (size_t i = 0; i < n; ++i)
        if (kFleetColumns[i] == v.sort) at = i;
      v.sort = kFleetColumns[next_column(at, n, k.key)];
      v.message = std::string("sorted by ") + fleet_top_column_name(v.sort);
      return {{}, true};
    }
    case FleetTopCommand::kReverse: v.reverse = !v.reverse; return {{}, true};
    case FleetTopCommand::kFilter: v.filter_prompt = true; v.typed = v.filter; return {};
    case FleetTopCommand::kPace: return {pace_key(v, k.key).value_or(TopAction{})};
    case FleetTopCommand::kBack:
      if (!v.filter.empty()) v.message = "filter cleared";
      v.filter.clear();
      return {{}, true};
    case FleetTopCommand::kNotHere: return not_here(v, k.key);
  }
  return {};
}

}  // namespace

TopAction fleet_top_key(FleetTopView& view, int key, const FleetTopFrame& frame, size_t page) {
  if (view.filter_prompt)
    return typed_filter_key(view, key, [](FleetTopView& v) { v.filter_prompt = false; }, fleet_top_filter_error);
  if (key == kKeyCtrlC) return {TopAction::kQuit};
  if (view.screen == FleetTopView::Screen::kHelp) {
    view.screen = FleetTopView::Screen::kMain;
    return key == 'q' ? TopAction{TopAction::kQuit} : TopAction{};
  }
  view.message.clear();
  std::vector<FleetTopRow> rows = fleet_top_rows(frame, view);
  FleetKey k{view, key, frame, page, rows};
  Done done{{}, key == kKeyResize};
  if (const KeyBinding<FleetTopCommand>* b = find_key(fleet_top_keymap(), key)) done = fleet_command(b->command, k);
  if (done.reselect) keep_selection(view.selected, view.scroll, fleet_top_rows(frame, view).size(), page);
  return done.action;
}

}  // namespace gpumap
