// The terminal under `gpumap top`: ncurses (wide-character build) behind a small seam, so the
// loop (top/top_app.h) only paints lines (output/top_view.h) and reads keys (top/top_keys.h).
// The terminal is restored on every way out: quit, Ctrl-C, SIGTERM/SIGHUP, an exception, and
// a crash (SIGSEGV, SIGABRT, SIGBUS, SIGFPE: restored, then the signal's default action).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "output/top_view.h"

namespace gpumap {

class Screen {
 public:
  /// Takes over the terminal (stdin/stdout); throws Error(kExitUsage) when they are not one
  /// ncurses can drive.  `color`: colours when the terminal has them.
  explicit Screen(bool color);
  ~Screen();  // restores the terminal
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  size_t width() const;
  size_t height() const;
  /// Whether the terminal shows UTF-8 (the locale's codeset) and is not the Linux console.
  bool utf8() const { return utf8_; }
  /// Replaces the screen with `lines` (curses sends only what changed).
  void draw(const std::vector<TopLine>& lines);
  /// The next key (TopKey or a character), or -1 when none came within `timeout_ms`; `wake_fd`
  /// readable also ends the wait (-1 returned).  A resize is kKeyResize.
  int read_key(int timeout_ms, int wake_fd);
  /// Ctrl-Z: gives the terminal back, stops the process, takes it again on `fg`.
  void suspend();

 private:
  bool utf8_ = false;
  bool color_ = false;
};

/// Set by SIGINT, SIGTERM and SIGHUP while a Screen is up: the loop ends and restores the terminal.
bool screen_stop_requested();

}  // namespace gpumap
