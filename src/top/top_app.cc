#include "top/top_app.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "model/exit_codes.h"
#include "os/proc.h"
#include "session/top.h"
#include "top/screen.h"
#include "top/top_keys.h"

namespace gpumap {

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// What the reader thread and the screen share.  The reader owns the read; the screen copies
/// the latest frame out under the lock.
struct Shared {
  std::mutex m;
  std::condition_variable cv;
  std::shared_ptr<const TopFrame> latest;  // the last good frame, with the last read's error if it failed
  TopHistory history;
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

void reader(std::shared_ptr<Shared> sh, std::function<TopFrame()> read) {
  std::unique_lock<std::mutex> lock(sh->m);
  auto last = std::chrono::steady_clock::time_point{};
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
    TopFrame f = read();
    lock.lock();
    last = std::chrono::steady_clock::now();
    sh->reading = false;
    if (!f.error.empty() && sh->latest) {  // keep showing the last good frame, and say the read failed
      auto kept = std::make_shared<TopFrame>(*sh->latest);
      kept->error = f.error;
      sh->latest = kept;
    } else {
      record_history(sh->history, f);
      sh->latest = std::make_shared<const TopFrame>(std::move(f));
    }
    sh->fresh = true;
    if (sh->wake_w >= 0) {
      char c = 1;
      [[maybe_unused]] ssize_t n = write(sh->wake_w, &c, 1);
    }
  }
  sh->finished = true;
  sh->cv.notify_all();
}

/// Rows the table shows on a screen of `height` lines, for PgUp/PgDn and the scroll.
size_t table_page(const std::vector<TopLine>& lines) { return lines.size() > 12 ? lines.size() - 12 : 1; }

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

std::string top_once(const TopFrame& frame, const TopView& view, size_t width, bool color) {
  TopHistory history;
  record_history(history, frame);
  TopStatus status;
  status.now_unix_ms = frame.read_unix_ms;
  return top_text(render_top(frame, history, view, status, width, 0), color);
}

int run_top(const TopOptions& options, const std::function<TopFrame()>& read) {
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) wake[0] = wake[1] = -1;
  auto sh = std::make_shared<Shared>();
  sh->interval_s = options.view.interval_s;
  sh->wake_w = wake[1];
  TopView view = options.view;
  int code = kExitOk;
  {
    Screen screen(options.color);  // throws before any thread starts when there is no terminal
    view.utf8 = screen.utf8();
    std::thread(reader, sh, read).detach();  // a hung driver read must never hold quitting
    std::shared_ptr<const TopFrame> frame = std::make_shared<TopFrame>();
    TopHistory history;
    size_t page = 1;
    bool dirty = true;
    int64_t drawn_second = 0;
    while (!screen_stop_requested()) {
      TopStatus status;
      {
        std::lock_guard<std::mutex> lock(sh->m);
        if (sh->fresh) {
          frame = sh->latest;
          history = sh->history;
          sh->fresh = false;
          dirty = true;
        }
        status.reading = sh->reading;
        status.reading_since_ms = sh->reading_since;
      }
      status.now_unix_ms = now_ms();
      if (status.now_unix_ms / 1000 != drawn_second) dirty = true;  // the clock, and the stale line
      if (dirty) {
        size_t w = screen.width(), h = screen.height();
        std::vector<TopLine> lines;
        if (w < 80 || h < 24) {
          lines = top_too_small(w, h);
        } else {
          keep_selection(view, top_rows(*frame, view).size(), page);
          lines = render_top(*frame, history, view, status, w, h);
          page = table_page(lines);
        }
        screen.draw(lines);
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
      TopAction a = top_key(view, key, *frame, page);
      if (a.kind == TopAction::kQuit) break;
      if (a.kind == TopAction::kSignal) view.message = signal_shown_process(*frame, a);
      std::lock_guard<std::mutex> lock(sh->m);
      sh->interval_s = view.interval_s;
      sh->paused = view.paused;
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
  if (!finished) {  // the reader is inside a driver call that does not return: leave without it
    std::fflush(nullptr);
    _exit(code);
  }
  if (wake[0] >= 0) {
    close(wake[0]);
    close(wake[1]);
  }
  return code;
}

}  // namespace gpumap
