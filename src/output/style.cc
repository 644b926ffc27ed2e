#include "output/style.h"

#include <locale.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "model/ascii.h"
#include "model/env_vars.h"

namespace gpumap {
namespace {

TermStyle g_style;

/// Whether a FORCE_COLOR / CLICOLOR_FORCE value asks for colour: set, not empty, not "0".
bool forces(const std::optional<std::string>& v) { return v && !v->empty() && *v != "0"; }

// The C.UTF-8 locale for wcwidth(3), whatever the process's own (the commands run in the C
// locale, whose wcwidth knows no character past ASCII; `top` takes the user's, which may not be
// UTF-8).  Null where the C library has none (a static build): char_cells then uses its own table
// of the wide ranges.
locale_t utf8_locale() {
  static const locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    if (!l) l = newlocale(LC_CTYPE_MASK, "C.utf8", static_cast<locale_t>(nullptr));
    return l;
  }();
  return loc;
}

// Cells of code point `cp` past ASCII: wcwidth in C.UTF-8; a character it calls unprintable
// counts 1 (gpumap shows controls as '?' before this).
size_t char_cells(char32_t cp) {
  if (locale_t loc = utf8_locale()) {
    locale_t old = uselocale(loc);
    int w = wcwidth(static_cast<wchar_t>(cp));
    uselocale(old);
    return w < 0 ? 1 : static_cast<size_t>(w);
  }
  // Unicode's East Asian Wide and Fullwidth blocks and the emoji, and the combining marks.
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0xFE00 && cp <= 0xFE0F)) return 0;
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0xA4CF) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD))
    return 2;
  return 1;
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

TermStyle make_term_style(bool is_tty, std::optional<size_t> tty_columns, const Environment& env, bool wide) {
  TermStyle st;
  st.tty = is_tty;
  st.fit = is_tty && !wide;
  st.width = 80;
  if (tty_columns && *tty_columns > 0) st.width = *tty_columns;
  if (std::optional<std::string> columns = env.get(env_var("COLUMNS"))) {
    char* end = nullptr;
    long n = std::strtol(columns->c_str(), &end, 10);
    if (!columns->empty() && !*end && n > 0 && n < 100000) st.width = static_cast<size_t>(n);
  }
  std::optional<std::string> no_color = env.get(env_var("NO_COLOR"));
  bool forced = forces(env.get(env_var("FORCE_COLOR"))) || forces(env.get(env_var("CLICOLOR_FORCE")));
  bool dumb = env.get(env_var("TERM")).value_or("") == "dumb";
  st.color = !(no_color && !no_color->empty()) && (forced || (is_tty && !dumb));
  // The charset: the first of LC_ALL, LC_CTYPE, LANG that is set and not empty (POSIX's order).
  std::string locale;
  for (std::optional<std::string> v : {env.get(env_var("LC_ALL")), env.get(env_var("LC_CTYPE")), env.get(env_var("LANG"))})
    if (v && !v->empty()) {
      locale = *v;
      break;
    }
  std::string lower = ascii::lower(locale);
  st.utf8 = (lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos) &&
            env.get(env_var("TERM")).value_or("") != "linux";
  return st;
}

TermStyle term_style_from_env(const Environment& env, bool wide) {
  bool tty = isatty(STDOUT_FILENO) == 1;
  std::optional<size_t> cols;
  winsize ws{};
  if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) cols = ws.ws_col;
  return make_term_style(tty, cols, env, wide);
}

const TermStyle& term_style() { return g_style; }
void set_term_style(const TermStyle& s) { g_style = s; }

size_t next_char_cells(const std::string& s, size_t* i) {
  unsigned char c = static_cast<unsigned char>(s[*i]);
  size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 1) {
    ++*i;
    return 1;
  }
  char32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) {
    if (*i + k >= s.size() || (static_cast<unsigned char>(s[*i + k]) & 0xC0) != 0x80) n = 0;
    if (n == 0) break;
    cp = (cp << 6) | (static_cast<unsigned char>(s[*i + k]) & 0x3F);
  }
  if (n == 0) {  // not UTF-8: one byte, one cell (as printable() would show it)
    ++*i;
    return 1;
  }
  *i += n;
  return char_cells(cp);
}

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) n += next_char_cells(s, &i);
  return n;
}

std::string ellipsize(const std::string& s, size_t width) {
  if (display_width(s) <= width) return s;
  if (width == 0) return "";
  size_t cols = 0, i = 0;
  while (i < s.size()) {
    size_t at = i, w = next_char_cells(s, &i);
    if (cols + w + 1 > width) {  // leave a cell for the "…"
      i = at;
      break;
    }
    cols += w;
  }
  return s.substr(0, i) + "\u2026";
}

std::string ellipsize_cell(const std::string& s, size_t width) {
  size_t mig = s.rfind(" MIG ");
  if (display_width(s) <= width || mig == std::string::npos || mig == 0) return ellipsize(s, width);
  std::string tail = s.substr(mig);  // " MIG 3g.40gb"
  size_t tail_w = display_width(tail);
  if (tail_w + 2 > width) return ellipsize(s.substr(mig + 1), width);  // the profile without the model
  return ellipsize(s.substr(0, mig), width - tail_w) + tail;
}

std::string short_uuid(const std::string& s) {
  if (s.size() != 40 || (s.rfind("GPU-", 0) != 0 && s.rfind("MIG-", 0) != 0)) return s;
  for (size_t i = 4; i < 12; ++i)
    if (!is_hex(s[i])) return s;
  return s.substr(0, 12) + "\u2026";
}

std::string short_cell(const std::string& s) {
  std::string u = short_uuid(s);
  if (u != s) return u;
  for (const char* domain : {"00000000:", "0000:"}) {
    std::string d = domain;
    if (s.size() == d.size() + 7 && s.rfind(d, 0) == 0 && s[d.size() + 2] == ':' && s[d.size() + 5] == '.')
      return s.substr(d.size());
  }
  if (s.rfind("NVIDIA ", 0) == 0 && s.size() > 7) return s.substr(7);
  return s;
}

namespace {

// A word that starts a shell command in prose: `export`, `unset`, `sudo`, a gpumap or launcher
// command, or an assignment prefix (`CUDA_VISIBLE_DEVICES=GPU-...`).
bool starts_command(const std::string& w) {
  static const char* const kWords[] = {"export", "unset", "sudo", "gpumap", "srun", "sbatch", "torchrun", "docker",
                                       "mpirun"};  // not nvidia-smi: prose says "nvidia-smi GPU 1 (...)"
  for (const char* k : kWords)
    if (w == k) return true;
  size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i)
    if (!(std::isupper(static_cast<unsigned char>(w[i])) || std::isdigit(static_cast<unsigned char>(w[i])) || w[i] == '_'))
      return false;
  return !std::isdigit(static_cast<unsigned char>(w[0]));
}

struct Piece {
  size_t gap;        // spaces before it, as written
  std::string text;  // never broken
};

// The words of `text`; with `keep_commands`, a `quoted span` is one piece, and so is a command
// from where it starts (first in the text or after a word ending in `:`) to the end of the text.
std::vector<Piece> pieces(const std::string& text, bool keep_commands) {
  std::vector<Piece> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = text.find_first_not_of(' ', i);
    if (start == std::string::npos) break;
    size_t gap = std::max<size_t>(start - i, 1);
    size_t sp = text.find(' ', start);
    std::string word = text.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
    i = sp == std::string::npos ? text.size() : sp;
    if (keep_commands) {
      bool after_colon = out.empty() || (!out.back().text.empty() && out.back().text.back() == ':');
      if (after_colon && starts_command(word)) {  // the rest of the text is the command
        out.push_back({gap, text.substr(start)});
        while (!out.back().text.empty() && out.back().text.back() == ' ') out.back().text.pop_back();
        break;
      }
      size_t tick = word.find('`');
      if (tick != std::string::npos && word.find('`', tick + 1) == std::string::npos) {
        size_t close = text.find('`', start + tick + 1);  // the span runs to its closing backquote's word
        if (close != std::string::npos) {
          size_t stop = text.find(' ', close);
          word = text.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
          i = stop == std::string::npos ? text.size() : stop;
        }
      }
    }
    out.push_back({gap, word});
  }
  return out;
}

}  // namespace

std::string wrap(const std::string& text, size_t width, size_t first_indent, size_t indent, bool keep_commands) {
  std::string out, line = std::string(first_indent, ' ');
  size_t cols = first_indent;
  bool empty_line = true;
  for (const Piece& p : pieces(text, keep_commands)) {
    size_t w = display_width(p.text);
    if (!empty_line && cols + p.gap + w > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
      cols = indent;
      empty_line = true;
    }
    if (!empty_line) line += std::string(p.gap, ' '), cols += p.gap;
    line += p.text;
    cols += w;
    empty_line = false;
  }
  return out + line;
}

std::string colored(const std::string& text, const std::string& severity, const TermStyle& st) {
  if (!st.color) return text;
  const char* code = severity == "error" ? "31" : severity == "warning" ? "33" : "36";
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

}  // namespace gpumap
