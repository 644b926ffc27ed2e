#include "top/top_app.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "model/error.h"
#include "model/exit_codes.h"
#include "os/proc.h"
#include "output/style.h"
#include "session/top.h"
#include "top/screen.h"
#include "top/top_keys.h"

namespace gpumap {

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// One kind of live view under the loop: the host's (TopFrame) or the fleet's (FleetAnswer).  The
/// loop owns the threads, the timing, the terminal and the lock; a panel owns its frames and view.
/// read() runs on the reader thread under no lock and touches only what it reads into;
/// publish() (reader thread) and take() (screen thread) run under the loop's lock; the rest on the
/// screen thread only.
class Panel {
 public:
  virtual ~Panel() = default;
  virtual void read() = 0;     // one read, into the panel's incoming frame
  virtual void publish() = 0;  // the incoming frame becomes the newest (a failed one keeps the last good)
  virtual void take() = 0;     // the newest frame becomes the one drawn
  virtual std::vector<TopLine> draw(const TopStatus& status, size_t width, size_t height) = 0;
  virtual TopAction key(int key) = 0;
  virtual double interval_s() const = 0;
  virtual bool paused() const = 0;
  virtual void set_utf8(bool utf8) = 0;
  /// The view ends (after take): the fleet's first read failed, which is `fleet`'s error.
  virtual bool ended() const { return false; }
};

/// What the reader thread and the screen share.  The reader owns the read; the screen copies
/// the latest frame out under the lock.
struct Shared {
  std::mutex m;
  std::condition_variable cv;
  bool fresh = false;
  bool reading = false;
  int64_t reading_since = 0;
  bool read_now = true;
  bool stop = false;
  bool paused = false;
  bool finished = false;  // the reader thread has returned
  double interval_s = 1;
  int wake_w = -1;  // written to after each read: the screen redraws
};

void reader(std::shared_ptr<Shared> sh, std::shared_ptr<Panel> panel) {
  std::unique_lock<std::mutex> lock(sh->m);
  std::chrono::steady_clock::time_point last{};
  while (!sh->stop) {
    auto due = last + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(sh->interval_s));
    if (!sh->read_now && (sh->paused || std::chrono::steady_clock::now() < due)) {
      if (sh->paused) sh->cv.wait(lock);
      else sh->cv.wait_until(lock, due);
      continue;
    }
    sh->read_now = false;
    sh->reading = true;
    sh->reading_since = now_ms();
    lock.unlock();
    panel->read();
    lock.lock();
    last = std::chrono::steady_clock::now();
    sh->reading = false;
    panel->publish();
    sh->fresh = true;
    if (sh->wake_w >= 0) {
      char c = 1;
      [[maybe_unused]] ssize_t n = write(sh->wake_w, &c, 1);
    }
  }
  sh->finished = true;
  sh->cv.notify_all();
}

/// The signals the prompt offers, by name (glibc's sigabbrev_np is 2.32, above the portable floor).
std::string signal_name(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

}  // namespace

std::string signal_shown_process(const TopFrame& frame, const TopAction& a) {
  const ProcessRow* row = nullptr;
  for (const ProcessRow& r : frame.ps.result.rows)
    if (r.local_pid && *r.local_pid == a.pid) row = &r;
  const std::string who = "pid " + std::to_string(a.pid);
  if (!row) return who + " is no longer a GPU process: nothing sent";
  if (!row->start_ticks || !row->uid)
    return who + ": its start time or owner could not be read, so it cannot be told from a process that took its pid: "
                 "nothing sent (use kill(1) after checking it)";
  const ProcFs proc(frame.ps.proc_root);
  // Checked with the process held (a pidfd): its start time and owner as the frame read them,
  // so a pid reused by another process since (one refresh, or a paused or stale frame) is never hit.
  std::string err = signal_process_checked(a.pid, a.signal, [&]() -> std::string {
    ProcProcess now = proc.read(a.pid, false);
    if (now.access == ProcAccess::kGone || now.zombie) return who + " has exited: nothing sent";
    if (now.start_ticks != row->start_ticks || now.uid != row->uid || now.command != row->command)
      return who + " is another process now (it started after the one shown" +
             std::string(now.uid != row->uid ? ", as another user" : "") + "): nothing sent; press r to read again";
    return "";
  });
  if (!err.empty()) return err.rfind("pid ", 0) == 0 ? err : who + ": " + err;
  return "sent " + signal_name(a.signal) + " to " + who;
}

std::vector<TopLine> draw_top_screen(TopScreenState& s, const TopFrame& frame, const TopHistory& history,
                                     const TopStatus& status, size_t width, size_t height) {
  keep_selection(s.view, top_rows(frame, s.view).size(), s.page);
  for (auto it = s.view.tagged.begin(); it != s.view.tagged.end();) {  // a tag goes with its process
    bool here = std::any_of(frame.ps.result.rows.begin(), frame.ps.result.rows.end(), [&](const ProcessRow& r) {
      return r.local_pid == it->first && r.start_ticks.value_or(-1) == it->second;
    });
    it = here ? std::next(it) : s.view.tagged.erase(it);
  }
  TableWindow w{s.view.scroll, s.page, s.view.selected};
  std::vector<TopLine> lines = render_top(frame, history, s.view, status, width, height, &w);
  if (s.view.screen == TopView::Screen::kMain && height) {  // what the table showed is what the keys act on
    s.view.selected = w.selected;
    s.view.scroll = w.first;
    s.page = std::max<size_t>(w.shown, 1);
    s.shown_first = w.first;
    s.shown_rows = w.shown;
    s.top_line = w.top_line;
  }
  return lines;
}

TopAction press_top_key(TopScreenState& s, int key, const TopFrame& frame) {
  if (std::optional<size_t> line = top_clicked_line(key)) {  // a click on a row drawn selects it
    if (s.view.screen == TopView::Screen::kMain && s.view.prompt == TopView::Prompt::kNone && *line >= s.top_line &&
        *line < s.top_line + s.shown_rows) {
      s.view.selected = s.shown_first + (*line - s.top_line);
      s.view.message.clear();
    }
    return {};
  }
  // Enter and k act on the selected row only when it was drawn: a row never seen is never opened
  // or signalled (the drawing keeps the selection on screen, so this holds between two drawings).
  const KeyBinding<TopCommand>* b = find_key(top_keymap(), key);
  bool on_row = b && (b->command == TopCommand::kDetail || b->command == TopCommand::kSignal);
  if (on_row && s.view.screen == TopView::Screen::kMain && s.view.prompt == TopView::Prompt::kNone &&
      !top_rows(frame, s.view).empty() && (s.view.selected < s.shown_first || s.view.selected >= s.shown_first + s.shown_rows)) {
    s.view.message = "the selected row is not on screen: nothing done";
    return {};
  }
  TopAction a = top_key(s.view, key, frame, s.page);
  if (a.kind == TopAction::kEnviron) read_shown_environ(frame, a.pid, s.view);
  return a;
}

void read_shown_environ(const TopFrame& frame, uint32_t pid, TopView& view) {
  const ProcessRow* row = nullptr;
  for (const ProcessRow& r : frame.ps.result.rows)
    if (r.local_pid && *r.local_pid == pid) row = &r;
  ProcFs proc(frame.ps.proc_root);
  std::optional<ProcStat> st = proc.stat(pid);
  if (!row || (st && row->start_ticks && *row->start_ticks != st->start_ticks)) {  // a pid taken since
    view.environ_note = "pid " + std::to_string(pid) + " has exited or is another process now: nothing read";
    return;
  }
  ProcProcess p = proc.read(pid, true);
  if (!p.environ) {
    view.environ_note = "its environment cannot be read (" + (p.environ_error.empty() ? std::string("not visible") : p.environ_error) +
                        "): another user's process needs root";
    return;
  }
  view.environ = *p.environ;
  if (p.environ_truncated) view.environ_note = "its environment was cut: the variables past the cut are not listed";
}

std::string signal_tagged(const TopFrame& frame, const TopAction& a) {
  std::string out;
  size_t sent = 0;
  for (uint32_t pid : a.pids) {
    TopAction one{TopAction::kSignal, pid, a.signal};
    std::string said = signal_shown_process(frame, one);
    if (said.rfind("sent ", 0) == 0) ++sent;
    else out += (out.empty() ? "" : "; ") + said;
  }
  return "sent " + signal_name(a.signal) + " to " + std::to_string(sent) + " of " + std::to_string(a.pids.size()) +
         " tagged" + (out.empty() ? "" : ": " + out);
}

std::string top_once(const TopFrame& frame, const TopView& view, size_t width, bool color) {
  TopHistory history;
  record_history(history, frame);
  TopStatus status;
  status.now_unix_ms = frame.read_unix_ms;
  return top_text(render_top(frame, history, view, status, width, 0), color);
}

namespace {

/// The host's view: a frame per read of this machine (session/top.h), with history.
class HostPanel : public Panel {
 public:
  HostPanel(TopView view, std::function<TopFrame()> read) : screen_{std::move(view)}, read_(std::move(read)) {}
  void read() override { incoming_ = read_(); }
  void publish() override {
    if (!incoming_.error.empty() && latest_) {  // keep showing the last good frame, and say the read failed
      auto kept = std::make_shared<TopFrame>(*latest_);
      kept->error = incoming_.error;
      latest_ = kept;
    } else {
      record_history(latest_history_, incoming_);
      latest_ = std::make_shared<const TopFrame>(std::move(incoming_));
    }
    incoming_ = TopFrame{};
  }
  void take() override {
    frame_ = latest_;
    history_ = latest_history_;
  }
  std::vector<TopLine> draw(const TopStatus& status, size_t w, size_t h) override {
    return draw_top_screen(screen_, *frame_, history_, status, w, h);
  }
  TopAction key(int key) override {
    TopAction a = press_top_key(screen_, key, *frame_);
    if (a.kind == TopAction::kSignal && a.pids.empty()) screen_.view.message = signal_shown_process(*frame_, a);
    if (a.kind == TopAction::kSignal && !a.pids.empty()) {
      screen_.view.message = signal_tagged(*frame_, a);
      screen_.view.tagged.clear();
    }
    return a;
  }
  double interval_s() const override { return screen_.view.interval_s; }
  bool paused() const override { return screen_.view.paused; }
  void set_utf8(bool utf8) override { screen_.view.utf8 = utf8; }

 private:
  TopScreenState screen_;
  std::function<TopFrame()> read_;
  TopFrame incoming_;                                                    // reader thread
  std::shared_ptr<const TopFrame> latest_;                               // under the loop's lock
  TopHistory latest_history_;                                            // under the loop's lock
  std::shared_ptr<const TopFrame> frame_ = std::make_shared<TopFrame>();  // screen thread
  TopHistory history_;
};

/// The fleet's view: an answer per read of Prometheus (session/fleet.h), the last good one kept
/// while Prometheus cannot be reached.  The first read runs on the reader thread like the others,
/// under a screen that says it is asking and takes q (issue 56: a Prometheus slow to answer held
/// the terminal and `q` until it did); when it fails, the view ends and run_fleet_top throws its
/// error, as `gpumap fleet` would.
class FleetPanel : public Panel {
 public:
  FleetPanel(FleetTopView view, std::function<FleetAnswer()> read) : view_(std::move(view)), read_(std::move(read)) {}
  void read() override {
    if (!first_done_) {  // the first answer: its failure is kept whole, to be thrown after the screen
      try {
        incoming_.answer = std::make_shared<const FleetAnswer>(read_());
        incoming_.read_unix_ms = now_ms();
      } catch (...) {
        incoming_first_error_ = std::current_exception();
      }
      first_done_ = true;
      return;
    }
    incoming_ = read_fleet_top_frame(FleetTopFrame{}, read_, 0);
  }
  void publish() override {
    if (incoming_first_error_) {
      first_error_ = incoming_first_error_;
      incoming_first_error_ = nullptr;
    } else if (incoming_.answer && incoming_.error.empty()) {
      latest_ = std::move(incoming_);
    } else {  // keep the last good answer, and say the read failed and since when
      latest_.error = incoming_.error;
      latest_.failed_unix_ms = incoming_.failed_unix_ms;
    }
    incoming_ = FleetTopFrame{};
  }
  void take() override {
    frame_ = latest_;
    ended_ = first_error_ != nullptr;
  }
  bool ended() const override { return ended_; }
  std::exception_ptr first_error() const { return first_error_; }
  std::vector<TopLine> draw(const TopStatus& status, size_t w, size_t h) override {
    if (!frame_.answer) return waiting(status, w);
    keep_selection(view_.selected, view_.scroll, fleet_top_rows(frame_, view_).size(), page_);
    TableWindow win{view_.scroll, page_, view_.selected};
    std::vector<TopLine> lines = render_fleet_top(frame_, view_, status, w, h, &win);
    if (view_.screen == FleetTopView::Screen::kMain) {
      view_.selected = win.selected;
      view_.scroll = win.first;
      page_ = std::max<size_t>(win.shown, 1);
    }
    return lines;
  }
  TopAction key(int key) override {
    if (!frame_.answer) return key == 'q' || key == 'Q' || key == kKeyCtrlC ? TopAction{TopAction::kQuit} : TopAction{};
    return fleet_top_key(view_, key, frame_, page_);
  }
  double interval_s() const override { return view_.interval_s; }
  bool paused() const override { return frame_.answer && view_.paused; }
  void set_utf8(bool utf8) override { view_.utf8 = utf8; }

 private:
  // Before the first answer: what is asked, for how long so far, and that q quits.
  std::vector<TopLine> waiting(const TopStatus& status, size_t w) const {
    std::string since = status.reading && status.reading_since_ms
                            ? " (" + std::to_string((status.now_unix_ms - status.reading_since_ms) / 1000) + " s)"
                            : "";
    std::vector<TopLine> out;
    for (std::string line : {"gpumap top: asking Prometheus for the fleet" + since + "\u2026",
                             std::string("q quits")}) {
      if (display_width(line) > w) line = ellipsize(line, w);
      out.push_back({{line, TopAttr::kNormal}});
    }
    return out;
  }
  FleetTopView view_;
  std::function<FleetAnswer()> read_;
  FleetTopFrame incoming_;                   // reader thread
  bool first_done_ = false;                  // reader thread
  std::exception_ptr incoming_first_error_;  // reader thread
  FleetTopFrame latest_;                     // under the loop's lock
  std::exception_ptr first_error_;           // under the loop's lock
  FleetTopFrame frame_;                      // screen thread
  bool ended_ = false;                       // screen thread
  size_t page_ = 1;
};

int run_panel(const std::shared_ptr<Panel>& panel, bool color) {
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) wake[0] = wake[1] = -1;
  auto sh = std::make_shared<Shared>();
  sh->interval_s = panel->interval_s();
  sh->wake_w = wake[1];
  int code = kExitOk;
  {
    Screen screen(color);  // throws before any thread starts when there is no terminal
    panel->set_utf8(screen.utf8());
    std::thread(reader, sh, panel).detach();  // a hung read must never hold quitting
    bool dirty = true;
    int64_t drawn_second = 0;
    while (!screen_stop_requested()) {
      TopStatus status;
      {
        std::lock_guard<std::mutex> lock(sh->m);
        if (sh->fresh) {
          panel->take();
          sh->fresh = false;
          dirty = true;
        }
        if (panel->ended()) break;
        status.reading = sh->reading;
        status.reading_since_ms = sh->reading_since;
      }
      status.now_unix_ms = now_ms();
      if (status.now_unix_ms / 1000 != drawn_second) dirty = true;  // the clock, and the stale line
      if (dirty) {
        size_t w = screen.width(), h = screen.height();
        screen.draw(w < 80 || h < 24 ? top_too_small(w, h) : panel->draw(status, w, h));
        dirty = false;
        drawn_second = status.now_unix_ms / 1000;
      }
      int key = screen.read_key(static_cast<int>(1000 - status.now_unix_ms % 1000), wake[0]);
      if (key < 0) continue;
      dirty = true;
      if (key == 26) {  // Ctrl-Z
        screen.suspend();
        continue;
      }
      TopAction a = panel->key(key);
      if (a.kind == TopAction::kQuit) break;
      std::lock_guard<std::mutex> lock(sh->m);
      sh->interval_s = panel->interval_s();
      sh->paused = panel->paused();
      if (a.kind == TopAction::kReadNow) sh->read_now = true;
      sh->cv.notify_all();
    }
  }  // the terminal is restored here
  bool finished;
  {
    std::unique_lock<std::mutex> lock(sh->m);
    sh->stop = true;
    sh->cv.notify_all();
    sh->cv.wait_for(lock, std::chrono::milliseconds(300), [&] { return sh->finished; });
    finished = sh->finished;
  }
  if (!finished) {  // the reader is inside a call that does not return: leave without it
    std::fflush(nullptr);
    _exit(code);
  }
  if (wake[0] >= 0) {
    close(wake[0]);
    close(wake[1]);
  }
  return code;
}

}  // namespace

int run_top(const TopOptions& options, const std::function<TopFrame()>& read) {
  return run_panel(std::make_shared<HostPanel>(options.view, read), options.color);
}

FleetTopFrame read_fleet_top_frame(const FleetTopFrame& last, const std::function<FleetAnswer()>& read, int64_t now_unix_ms) {
  FleetTopFrame f = last;
  try {
    f.answer = std::make_shared<const FleetAnswer>(read());
    f.read_unix_ms = now_unix_ms ? now_unix_ms : now_ms();
    f.error.clear();
    f.failed_unix_ms = 0;
  } catch (const Error& e) {
    f.error = e.what();
    f.failed_unix_ms = now_unix_ms ? now_unix_ms : now_ms();
  } catch (const std::exception& e) {  // never ends the view: said, and read again
    f.error = e.what();
    f.failed_unix_ms = now_unix_ms ? now_unix_ms : now_ms();
  }
  return f;
}

int run_fleet_top(const FleetTopOptions& options, const std::function<FleetAnswer()>& read) {
  auto panel = std::make_shared<FleetPanel>(options.view, read);
  int code = run_panel(panel, options.color);
  if (std::exception_ptr e = panel->first_error()) std::rethrow_exception(e);  // at start, unreachable is `fleet`'s error
  return code;
}

std::string fleet_top_once(const FleetAnswer& answer, FleetTopView view, size_t width, bool color) {
  FleetTopFrame frame;
  frame.answer = std::make_shared<const FleetAnswer>(answer);
  frame.read_unix_ms = now_ms();
  for (const FleetNode& n : answer.nodes) view.expanded.insert(n.instance);  // one frame: every node's GPUs and processes
  TopStatus status;
  status.now_unix_ms = frame.read_unix_ms;
  return top_text(render_fleet_top(frame, view, status, width, 0), color);
}

}  // namespace gpumap
