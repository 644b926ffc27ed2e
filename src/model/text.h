// Small text helpers shared by every layer.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumap {

/// "a, b, c" for join({"a","b","c"}, ", "); an empty part keeps its separators (",b" for {"", "b"}).
std::string join(const std::vector<std::string>& parts, const std::string& sep);
/// `text` cut at each `sep`, every piece kept, empty ones too: join's inverse ("a,,b" is three
/// pieces, "" is one empty piece).  The variables' own parsers decide what an empty piece means.
std::vector<std::string> split(std::string_view text, char sep);
/// Whether `s` is one or more of the digits 0-9 and nothing else.
bool all_digits(const std::string& s);
/// `s` without leading and trailing blanks (space, tab, CR, LF).
std::string trim(const std::string& s);

/// A plain non-negative decimal that fits in 9 digits ("0".."999999999"): no sign, no
/// spaces, no trailing text.  For launcher and container variables, which are read strictly.
bool parse_small_uint(std::string_view s, uint32_t& out);

/// `s` as one word for a POSIX shell: unchanged when it is not empty and holds only characters
/// no shell treats specially (letters, digits and `_-./:=,@%+`), else in single quotes (a quote
/// inside becomes '\''), so a fix line pastes as printed.
std::string shell_word(std::string_view s);

/// 0.1 -> "0.1", 86400 -> "86400", 1099511627776 -> "1099511627776": a bound in an error message.
std::string short_number(double x);

}  // namespace gpumap

namespace gpumap {

/// Length of the well-formed UTF-8 sequence starting at s[i] (1-4), or 0 when none starts there
/// (a stray continuation byte, an overlong form, a surrogate, > U+10FFFF, or a sequence cut
/// short); then *bad_length is the length of the malformed part (its "maximal subpart", >= 1).
size_t utf8_sequence_length(std::string_view s, size_t i, size_t* bad_length = nullptr);

/// `s` safe to print on someone's terminal, as procps `ps` prints command lines: every control
/// character (C0, DEL, and the C1 range U+0080-U+009F, which includes the 8-bit CSI), every
/// bidirectional control (U+061C, U+200E-200F, U+202A-202E, U+2066-2069), the separators
/// U+2028-2029, the byte-order mark U+FEFF, and every byte of malformed UTF-8 becomes '?'.
/// Other printable UTF-8 passes unchanged.
std::string printable(std::string_view s);

/// Edit distance (insert, delete, substitute, swap two neighbours): how far a typo is from a word.
size_t edit_distance(const std::string& a, const std::string& b);

/// " (did you mean `word`?)" for the closest of `known` within two edits of `typed`; "" otherwise.
std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known);

/// printable() line by line, keeping the newlines: for a block of text for people.
std::string printable_lines(std::string_view s);

}  // namespace gpumap
