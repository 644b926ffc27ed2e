#include "top/screen.h"

#include <langinfo.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <clocale>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <curses.h>

#include "model/error.h"
#include "model/exit_codes.h"
#include "top/top_keys.h"

namespace gpumap {

namespace {

std::atomic<bool> g_active{false};
volatile sig_atomic_t g_stop = 0;
std::terminate_handler g_previous_terminate = nullptr;

void restore_terminal() {
  if (g_active.exchange(false)) endwin();
}

void on_stop_signal(int) { g_stop = 1; }

void on_fatal_signal(int sig) {
  restore_terminal();  // not async-signal-safe, as in every curses program: the terminal matters more
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void on_terminate() {
  restore_terminal();
  if (g_previous_terminate) g_previous_terminate();
  std::abort();
}

enum Pair : short { kPairGood = 1, kPairWarn, kPairBad, kPairInfo };

}  // namespace

bool screen_stop_requested() { return g_stop != 0; }

Screen::Screen(bool color) {
  std::setlocale(LC_ALL, "");
  const char* codeset = nl_langinfo(CODESET);
  const char* term = std::getenv("TERM");
  utf8_ = codeset && std::strcmp(codeset, "UTF-8") == 0 && !(term && std::strcmp(term, "linux") == 0);
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
    throw Error(kExitUsage, "gpumap top needs a terminal (stdin and stdout)",
                "for one frame as text: gpumap top --once; for frames a program reads: gpumap ps --json --watch 1");
  SCREEN* s = newterm(nullptr, stdout, stdin);
  if (!s)
    throw Error(kExitUsage, std::string("gpumap top cannot drive this terminal (TERM=") + (term ? term : "") + ")",
                "set TERM to your terminal's type (xterm-256color, screen, linux), or use gpumap top --once");
  set_term(s);
  g_active = true;
  g_stop = 0;
  g_previous_terminate = std::set_terminate(on_terminate);
  std::atexit(restore_terminal);
  struct sigaction stop = {};
  stop.sa_handler = on_stop_signal;
  sigemptyset(&stop.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &stop, nullptr);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE}) std::signal(sig, on_fatal_signal);
  raw();  // Ctrl-C and Ctrl-Z arrive as keys
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  set_escdelay(25);
  // The wheel scrolls and a click selects (as in htop and nvitop); the terminal's own selection
  // is then Shift and the mouse.
  mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
  mouseinterval(0);
  // Home and End as tmux, screen and the Linux console send them, whatever TERM's terminfo says
  // (xterm-256color inside tmux knows only ESC O H / ESC O F: Home did nothing there).
  for (const char* home : {"\033[1~", "\033[7~", "\033[H", "\033OH"}) define_key(home, KEY_HOME);
  for (const char* end : {"\033[4~", "\033[8~", "\033[F", "\033OF"}) define_key(end, KEY_END);
  curs_set(0);
  color_ = color && has_colors();
  if (color_) {
    start_color();
    use_default_colors();
    init_pair(kPairGood, COLOR_GREEN, -1);
    init_pair(kPairWarn, COLOR_YELLOW, -1);
    init_pair(kPairBad, COLOR_RED, -1);
    init_pair(kPairInfo, COLOR_CYAN, -1);
  }
}

Screen::~Screen() {
  restore_terminal();
  std::set_terminate(g_previous_terminate);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGABRT, SIGBUS, SIGFPE}) std::signal(sig, SIG_DFL);
}

size_t Screen::width() const { return static_cast<size_t>(std::max(COLS, 1)); }
size_t Screen::height() const { return static_cast<size_t>(std::max(LINES, 1)); }

void Screen::draw(const std::vector<TopLine>& lines) {
  erase();
  int y = 0;
  for (const TopLine& line : lines) {
    if (y >= LINES) break;
    move(y, 0);
    for (const TopSpan& s : line) {
      attr_t a = A_NORMAL;
      short pair = 0;
      switch (s.attr) {
        case TopAttr::kBold: a = A_BOLD; break;
        case TopAttr::kDim: a = A_DIM; break;
        case TopAttr::kHeader: a = A_BOLD | A_UNDERLINE; break;
        case TopAttr::kSelected: a = A_REVERSE; break;
        case TopAttr::kGood: pair = kPairGood; break;
        case TopAttr::kWarn: pair = kPairWarn; a = color_ ? A_NORMAL : A_BOLD; break;
        case TopAttr::kBad: pair = kPairBad; a = color_ ? A_BOLD : A_BOLD | A_UNDERLINE; break;
        case TopAttr::kInfo: pair = kPairInfo; break;
        case TopAttr::kNormal: break;
      }
      attrset(a | (color_ && pair ? COLOR_PAIR(pair) : 0));
      addstr(s.text.c_str());  // the renderer cut it to the width; curses stops at the edge anyway
    }
    ++y;
  }
  attrset(A_NORMAL);
  refresh();
}

int Screen::read_key(int timeout_ms, int wake_fd) {
  nodelay(stdscr, TRUE);
  int ch = getch();
  if (ch == ERR) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    int n = poll(fds, wake_fd >= 0 ? 2 : 1, timeout_ms);
    if (n <= 0 && !(n < 0 && errno == EINTR)) return -1;
    if (fds[1].revents & POLLIN) {
      char buf[64];
      while (read(wake_fd, buf, sizeof buf) > 0) {
      }
      if (!(fds[0].revents & POLLIN)) return -1;
    }
    ch = getch();  // after EINTR: a resize (SIGWINCH) is waiting as KEY_RESIZE
    if (ch == ERR) return -1;
  }
  switch (ch) {
    case KEY_UP: return kKeyUp;
    case KEY_DOWN: return kKeyDown;
    case KEY_PPAGE: return kKeyPageUp;
    case KEY_NPAGE: return kKeyPageDown;
    case KEY_HOME: return kKeyHome;
    case KEY_END: return kKeyEnd;
    case KEY_LEFT: return kKeyLeft;
    case KEY_RIGHT: return kKeyRight;
    case KEY_ENTER:
    case '\r':
    case '\n': return kKeyEnter;
    case 27: return kKeyEscape;
    case KEY_BACKSPACE:
    case 127:
    case 8: return kKeyBackspace;
    case KEY_RESIZE: return kKeyResize;
    case 3: return kKeyCtrlC;
    case KEY_MOUSE: {
      MEVENT ev{};
      if (getmouse(&ev) != OK) return -1;
      if (ev.bstate & BUTTON4_PRESSED) return kKeyWheelUp;
      if (ev.bstate & BUTTON5_PRESSED) return kKeyWheelDown;
      if ((ev.bstate & BUTTON1_PRESSED) && ev.y >= 0) return top_click_key(static_cast<size_t>(ev.y));
      return -1;
    }
    default: return ch >= 0 && ch < 256 ? ch : -1;
  }
}

void Screen::suspend() {
  endwin();
  std::raise(SIGTSTP);  // the shell's job control; we continue here on `fg`
  refresh();
}

}  // namespace gpumap
