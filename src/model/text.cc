#include "model/text.h"

#include <algorithm>
#include <cstdio>

#include "model/ascii.h"

namespace gpumap {

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];  // empty parts keep their separator
  return out;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    size_t at = text.find(sep, start);
    out.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

bool parse_small_uint(std::string_view s, uint32_t& out) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  out = v;
  return true;
}

}  // namespace gpumap

namespace gpumap {

size_t utf8_sequence_length(std::string_view s, size_t i, size_t* bad_length) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  if (b < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte (Unicode table 3-7)
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  else n = 0;  // a continuation byte, C0/C1 (overlong 2-byte leads), or F5-FF
  size_t k = 1;
  if (n > 0)
    for (; k < n && i + k < s.size(); ++k) {
      unsigned char c = byte(i + k);
      if (k == 1 ? (c < lo || c > hi) : (c & 0xC0) != 0x80) break;
    }
  if (n > 0 && k == n) return n;
  if (bad_length) *bad_length = k;  // the maximal subpart: a start of a sequence, cut short
  return 0;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_d = 3;
  for (const std::string& k : known)
    if (size_t d = edit_distance(typed, k); d < best_d) best = &k, best_d = d;
  return best ? " (did you mean `" + *best + "`?)" : "";
}

namespace {

/// Whether the well-formed sequence of `n` bytes at s[i] is a character that reorders or breaks
/// what a terminal shows around it: the bidirectional marks, embeddings, overrides and isolates
/// (U+061C, U+200E-200F, U+202A-202E, U+2066-2069: "Trojan Source", CVE-2021-42574), the line and
/// paragraph separators U+2028-2029, and the byte-order mark U+FEFF.
bool invisible_control(std::string_view s, size_t i, size_t n) {
  if (n == 2) return static_cast<unsigned char>(s[i]) == 0xD8 && static_cast<unsigned char>(s[i + 1]) == 0x9C;  // U+061C
  if (n != 3) return false;
  unsigned cp = (static_cast<unsigned char>(s[i]) & 0x0Fu) << 12 | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6 |
                (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
  return cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0xFEFF;
}

}  // namespace

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t bad = 1;
    size_t n = utf8_sequence_length(s, i, &bad);
    unsigned char b = static_cast<unsigned char>(s[i]);
    bool c0 = n == 1 && (b < 0x20 || b == 0x7F);
    bool c1 = n == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;  // U+0080-U+009F
    if (n == 0 || c0 || c1 || invisible_control(s, i, n)) {
      out += '?';
      i += n == 0 ? bad : n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string shell_word(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s)
    plain &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("_-./:=,@%+").find(c) != std::string_view::npos;
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

std::string printable_lines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    size_t nl = s.find('\n', pos);
    out += printable(s.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    if (nl == std::string_view::npos) break;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

std::string ascii::lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace gpumap
