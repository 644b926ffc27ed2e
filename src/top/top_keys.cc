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
    return {TopAction::kSignal, view.signal_pid, sig};
  }
  view.prompt = TopView::Prompt::kNone;
  view.signal = 0;
  view.message = "no signal sent";
  return {};
}

}  // namespace

void keep_selection(size_t& selected, size_t& scroll, size_t rows, size_t page) {
  if (rows == 0) {
    selected = scroll = 0;
    return;
  }
  selected = std::min(selected, rows - 1);
  page = std::max<size_t>(page, 1);
  if (selected < scroll) scroll = selected;
  if (selected >= scroll + page) scroll = selected + 1 - page;
  scroll = std::min(scroll, rows > page ? rows - page : 0);
}

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
  size_t rows = top_rows(frame, view).size();
  auto select_process = [&]() -> const ProcessRow* {
    const ProcessRow* r = selected_row(view, frame);
    if (!r) view.message = rows ? "select a process first" : "no process to select";
    return r;
  };
  if (view.screen == TopView::Screen::kDetail) {
    switch (key) {
      case 'q':
      case kKeyEscape:
      case kKeyEnter: view.screen = TopView::Screen::kMain; return {};
      case kKeyUp: if (view.detail_scroll) --view.detail_scroll; return {};
      case kKeyDown: ++view.detail_scroll; return {};
      case kKeyPageUp: view.detail_scroll -= std::min(view.detail_scroll, page); return {};
      case kKeyPageDown: view.detail_scroll += page; return {};
      case kKeyLeft: view.detail_hscroll -= std::min<size_t>(view.detail_hscroll, 8); return {};
      case kKeyRight: view.detail_hscroll += 8; return {};
      case kKeyHome: view.detail_scroll = view.detail_hscroll = 0; return {};
      default: break;
    }
  }
  if (std::optional<TopAction> a = pace_key(view, key)) return *a;
  switch (key) {
    case 'q': return {TopAction::kQuit};
    case 'h':
    case '?': view.screen = TopView::Screen::kHelp; return {};
    case kKeyEscape:
      view.screen = TopView::Screen::kMain;
      if (!view.filter.empty()) view.message = "filter cleared";
      view.filter.clear();
      return {};
    case kKeyUp: if (view.selected) --view.selected; break;
    case kKeyDown: ++view.selected; break;
    case kKeyPageUp: view.selected -= std::min(view.selected, page); break;
    case kKeyPageDown: view.selected += page; break;
    case kKeyHome: view.selected = 0; break;
    case kKeyEnd: view.selected = rows ? rows - 1 : 0; break;
    case kKeyEnter:
      if (const ProcessRow* r = select_process()) {
        view.screen = TopView::Screen::kDetail;
        view.detail_pid = r->pid;
        view.detail_scroll = view.detail_hscroll = 0;
      }
      return {};
    case '<':
    case '>': {
      const std::vector<TopColumnSpec>& cols = top_columns();
      size_t n = cols.size(), at = column_at(view.sort);
      view.sort = cols[key == '<' ? (at + n - 1) % n : (at + 1) % n].id;
      view.message = std::string("sorted by ") + top_column_name(view.sort);
      break;
    }
    case 'r': view.reverse = !view.reverse; break;
    case '/':
      view.prompt = TopView::Prompt::kFilter;
      view.typed = view.filter;
      return {};
    case 't': view.tree = !view.tree; view.message = view.tree ? "tree view" : "flat view"; break;
    case 'c': view.compact_toggled = !view.compact_toggled; return {};
    case 'i':
      view.show_info = !view.show_info;
      view.message = view.show_info ? "info findings shown" : "info findings hidden";
      return {};
    case 'k':
    case kKeyResize: break;
    default: return {};
  }
  if (key == 'k') {
    if (const ProcessRow* r = select_process()) {
      if (!r->local_pid || r->state != ProcessState::kRunning) {
        view.message = "pid " + std::to_string(r->pid) + " cannot be signalled from here (" +
                       (r->state == ProcessState::kRunning ? "not in this PID namespace" : process_state_name(r->state)) +
                       ")";
      } else {
        view.prompt = TopView::Prompt::kSignal;
        view.signal_pid = *r->local_pid;
        view.signal = 0;  // a letter chooses it
      }
    }
    return {};
  }
  rows = top_rows(frame, view).size();
  keep_selection(view, rows, page);
  return {};
}

}  // namespace gpumap

namespace gpumap {

namespace {

TopAction fleet_filter_key(FleetTopView& view, int key) {
  return typed_filter_key(view, key, [](FleetTopView& v) { v.filter_prompt = false; }, fleet_top_filter_error);
}

const FleetTopColumn kFleetColumns[] = {FleetTopColumn::kNode,   FleetTopColumn::kState,     FleetTopColumn::kGpus,
                                        FleetTopColumn::kMemory, FleetTopColumn::kUtil,      FleetTopColumn::kProcesses,
                                        FleetTopColumn::kFindings};

}  // namespace

TopAction fleet_top_key(FleetTopView& view, int key, const FleetTopFrame& frame, size_t page) {
  if (view.filter_prompt) return fleet_filter_key(view, key);
  if (key == kKeyCtrlC) return {TopAction::kQuit};
  if (view.screen == FleetTopView::Screen::kHelp) {
    view.screen = FleetTopView::Screen::kMain;
    return key == 'q' ? TopAction{TopAction::kQuit} : TopAction{};
  }
  view.message.clear();
  std::vector<FleetTopRow> rows = fleet_top_rows(frame, view);
  const FleetTopRow* sel = view.selected < rows.size() ? &rows[view.selected] : nullptr;
  if (std::optional<TopAction> a = pace_key(view, key)) return *a;
  switch (key) {
    case 'q': return {TopAction::kQuit};
    case 'h':
    case '?': view.screen = FleetTopView::Screen::kHelp; return {};
    case kKeyEscape:
      if (!view.filter.empty()) view.message = "filter cleared";
      view.filter.clear();
      break;
    case kKeyUp: if (view.selected) --view.selected; break;
    case kKeyDown: ++view.selected; break;
    case kKeyPageUp: view.selected -= std::min(view.selected, page); break;
    case kKeyPageDown: view.selected += page; break;
    case kKeyHome: view.selected = 0; break;
    case kKeyEnd: view.selected = rows.empty() ? 0 : rows.size() - 1; break;
    case kKeyEnter:
    case kKeyRight:
    case kKeyLeft: {
      if (!sel) {
        view.message = "no node to select";
        return {};
      }
      const std::string& inst = sel->node->instance;
      bool open = view.expanded.count(inst) > 0;
      bool fold = key == kKeyLeft || (key == kKeyEnter && open && sel->kind == FleetTopRow::Kind::kNode);
      if (fold) {
        view.expanded.erase(inst);
        // The selection goes to the node's own row, which stays where it was.
        for (size_t i = view.selected; i-- > 0;)
          if (rows[i].kind == FleetTopRow::Kind::kNode && rows[i].node == sel->node) {
            view.selected = i;
            break;
          }
        if (sel->kind == FleetTopRow::Kind::kNode) view.message = open ? "" : "already folded";
      } else if (sel->kind == FleetTopRow::Kind::kNode) {
        view.expanded.insert(inst);
        if (sel->node->gpus.empty())
          view.message = printable(sel->node->node) + (sel->node->up ? ": no GPU reported" : ": down, no GPU known");
      }
      break;
    }
    case 'e': {
      bool all = frame.answer && std::all_of(frame.answer->nodes.begin(), frame.answer->nodes.end(),
                                             [&](const FleetNode& n) { return view.expanded.count(n.instance) > 0; });
      const FleetNode* at = sel ? sel->node : nullptr;
      view.expanded.clear();
      if (!all && frame.answer)
        for (const FleetNode& n : frame.answer->nodes) view.expanded.insert(n.instance);
      view.message = all ? "every node folded" : "every node expanded";
      std::vector<FleetTopRow> now = fleet_top_rows(frame, view);  // keep the selected node selected
      for (size_t i = 0; at && i < now.size(); ++i)
        if (now[i].node == at && now[i].kind == FleetTopRow::Kind::kNode) {
          view.selected = i;
          break;
        }
      break;
    }
    case '<':
    case '>': {
      size_t n = std::size(kFleetColumns), at = 0;
      for (size_t i = 0; i < n; ++i)
        if (kFleetColumns[i] == view.sort) at = i;
      view.sort = kFleetColumns[key == '<' ? (at + n - 1) % n : (at + 1) % n];
      view.message = std::string("sorted by ") + fleet_top_column_name(view.sort);
      break;
    }
    case 'r': view.reverse = !view.reverse; break;
    case '/':
      view.filter_prompt = true;
      view.typed = view.filter;
      return {};
    case 't': view.message = "no tree in the fleet view: parents are in each node's /proc (gpumap top on the node)"; return {};
    case 'c': view.message = "no GPU blocks to fold in the fleet view: Enter expands a node"; return {};
    case 'k': view.message = "no signals from the fleet view: signal on the node itself (gpumap top there, k)"; return {};
    case 'i': view.message = "info findings are counted, not fetched: start with --all to list them"; return {};
    case kKeyResize: break;
    default: return {};
  }
  keep_selection(view.selected, view.scroll, fleet_top_rows(frame, view).size(), page);
  return {};
}

}  // namespace gpumap
