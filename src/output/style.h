// How text output is laid out for the reader at the other end: a terminal gets tables that fit
// its width (UUIDs and names shortened, findings wrapped) and coloured severities; a pipe or
// --wide gets every value in full and no escape codes.  Pure apart from term_style_from_env().
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "env/environment.h"

namespace gpumap {

struct TermStyle {
  bool fit = false;     // shorten and wrap to `width` (a terminal without --wide)
  size_t width = 80;    // columns
  bool color = false;   // ANSI colours for severities (a terminal, or forced; never under NO_COLOR)
  bool tty = false;     // stdout is a terminal (escape codes such as clear-screen are welcome)
  bool utf8 = true;     // the locale's charset is UTF-8 and TERM is not the Linux console: block
                        // characters draw (top's bars); else ASCII
};

/// The style for stdout: `is_tty`, $COLUMNS (a positive number) else the terminal's width
/// (`tty_columns`) else 80; `wide` turns fitting off.  Colour on a terminal unless TERM=dumb;
/// FORCE_COLOR or CLICOLOR_FORCE set to anything but "" or "0" turns it on anyway (also into a
/// pipe: https://force-color.org, https://bixense.com/clicolors); NO_COLOR set to anything but ""
/// turns it off whatever else is set (https://no-color.org: it "prevents the addition of ANSI
/// color"; CMake documents the same order for CLICOLOR_FORCE).  Only the variables of the
/// terminal group of model/env_vars.h are read from `env`.
TermStyle make_term_style(bool is_tty, std::optional<size_t> tty_columns, const Environment& env, bool wide);
/// make_term_style for this process's stdout, with `env` the process's environment (main's).
TermStyle term_style_from_env(const Environment& env, bool wide);

/// The process-wide style the renderers use by default (set once by main; default: a pipe).
const TermStyle& term_style();
void set_term_style(const TermStyle& s);

/// Columns (terminal cells) a UTF-8 string takes: each character's wcwidth(3) in the C.UTF-8
/// locale, so a CJK character or an emoji counts 2 and a combining mark 0 (a process's command
/// line or a user name may hold any of them); a byte that is not UTF-8 counts 1.
size_t display_width(const std::string& s);
/// The cells of the character that starts at byte `*i` of `s` (0, 1 or 2); moves `*i` past it.
size_t next_char_cells(const std::string& s, size_t* i);
/// `s` cut to `width` columns, ending in "…" when cut (a wide character that would pass the
/// width is left out whole).
std::string ellipsize(const std::string& s, size_t width);
/// A table cell cut to `width` columns: ellipsize, except that a MIG device's name keeps its
/// profile, the part that tells slices apart ("A100-SXM4-80GB MIG 3g.40gb" -> "A100-S… MIG
/// 3g.40gb"), its model cut first and then the profile itself when nothing else is left.
std::string ellipsize_cell(const std::string& s, size_t width);
/// A GPU or MIG UUID shortened to its first 8 hex digits ("GPU-df9ecf4c…"), which gpumap
/// accepts back as a unique prefix; anything else unchanged.
std::string short_uuid(const std::string& s);
/// A table cell in its short form for a narrow terminal: short_uuid; a PCI bus id in domain 0
/// without it ("00000000:5D:00.0" -> "5D:00.0", accepted back as a GPU argument); a GPU name
/// without its "NVIDIA " prefix.  Anything else unchanged.
std::string short_cell(const std::string& s);

/// `text` wrapped at spaces to `width` columns: the first line starts with `first_indent`
/// spaces, the others with `indent` (a hanging indent).  A word longer than a line stays whole;
/// runs of spaces between words stay as written within a line.  With `keep_commands` (notes and
/// prose lines that may hold a command to paste) nothing that is pasted is broken: a `quoted span`
/// stays on one line, and so does a command (`export ...`, `unset ...`, `gpumap ...`,
/// `NAME=value <command>`, first or after a word ending in `:`) with the rest of the text after it,
/// moved whole to the next line when it does not fit (wider than a line, it stays one line).
std::string wrap(const std::string& text, size_t width, size_t first_indent, size_t indent, bool keep_commands = false);

/// `text` in the colour for a severity ("error" red, "warning" yellow, "info" cyan) when
/// `st.color`, else unchanged.
std::string colored(const std::string& text, const std::string& severity, const TermStyle& st);

}  // namespace gpumap
