#include "model/text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/ascii.h"

namespace gpumap {
namespace {

/// `s` as valid UTF-8, each malformed part (utf8_sequence_length's maximal subpart) replaced by
/// U+FFFD: what nlohmann::json's error_handler_t::replace writes, so the tests below check
/// utf8_sequence_length (which printable() uses) against that library.
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t bad = 1;
    size_t n = utf8_sequence_length(s, i, &bad);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += bad;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

TEST(Text, ValidUtf8PassesAndMalformedBytesAreReplaced) {
  EXPECT_EQ(valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf" + r);                  // Latin-1 e-acute
  EXPECT_EQ(valid_utf8("\xFF"), r);
  EXPECT_EQ(valid_utf8("\x80x"), r + "x");                      // stray continuation byte
  EXPECT_EQ(valid_utf8("\xC0\xAF"), r + r);                     // overlong '/'
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), r + r + r);             // overlong, 3 bytes
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);             // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);     // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE2\x82"), r);                         // cut short: one replacement
  EXPECT_EQ(valid_utf8("\xE2\x82z"), r + "z");
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(Text, ValidUtf8AgreesWithTheJsonLibrary) {
  // Every pair and triple of lead bytes with interesting followers: our replacement is exactly
  // what nlohmann's replace handler writes.
  const int follow[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xF0, 0xFF};
  for (int a = 0; a < 256; ++a)
    for (int b : follow)
      for (int c : follow) {
      std::string s{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c), 'z'};
      std::string ours = nlohmann::json(valid_utf8(s)).dump();
      std::string theirs = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      ASSERT_EQ(ours, theirs) << std::hex << a << " " << b << " " << c;
    }
}

TEST(Text, PrintableEscapesControlsLikeProcps) {
  EXPECT_EQ(printable("python3 train.py --lr 0.1"), "python3 train.py --lr 0.1");
  EXPECT_EQ(printable("\x1B[2J\x1B[Hrm -rf"), "?[2J?[Hrm -rf");   // clear screen + home
  EXPECT_EQ(printable("a\tb\nc\rd\x7F"), "a?b?c?d?");
  EXPECT_EQ(printable("\xC2\x9B" "31m"), "?31m");                 // 8-bit CSI (U+009B)
  EXPECT_EQ(printable("caf\xC3\xA9 \xC2\xA0"), "caf\xC3\xA9 \xC2\xA0");  // printable UTF-8 kept
  EXPECT_EQ(printable("caf\xE9\xFF"), "caf??");                   // malformed bytes
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a?b");
}

// Issue 56 item 13: the bidirectional controls (Trojan Source, CVE-2021-42574) and the Unicode
// line and paragraph separators passed: `evil\u202Etxt.sh` showed reversed, U+2028 broke a line
// in a terminal that honours it.  Each is one '?', the letters around them kept.
TEST(Text, PrintableReplacesBidiControlsAndUnicodeSeparators) {
  EXPECT_EQ(printable("evil\u202Etxt.sh"), "evil?txt.sh");  // RIGHT-TO-LEFT OVERRIDE
  for (const char* c : {"\u200E", "\u200F", "\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067",
                        "\u2068", "\u2069", "\u2028", "\u2029", "\uFEFF", "\u061C"})
    EXPECT_EQ(printable(std::string("a") + c + "b"), "a?b") << std::hex << static_cast<int>(static_cast<unsigned char>(c[2]));
  // Their neighbours stay: an en dash, a zero-width joiner's neighbour U+2010, CJK, U+FEFE.
  for (const char* kept : {"\u2013", "\u2010", "\u2030", "\u2065", "\u206A", "\u4E2D", "\uFEFE", "\u00E9"})
    EXPECT_EQ(printable(kept), kept);
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

TEST(Text, ShellWordQuotesOnlyWhatAShellWouldRead) {
  EXPECT_EQ(shell_word("GPU-1a2b,GPU-3c"), "GPU-1a2b,GPU-3c");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
}

}  // namespace
}  // namespace gpumap

namespace gpumap {
namespace {

TEST(Text, JoinKeepsTheSeparatorsOfEmptyParts) {
  EXPECT_EQ(join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join({"", "b"}, ","), ",b");  // an empty first rank still shows
  EXPECT_EQ(join({"a", ""}, ","), "a,");
  EXPECT_EQ(join({}, ","), "");
}

TEST(Text, SplitKeepsEveryPieceAndIsJoinsInverse) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split("0,1,2", ','), (V{"0", "1", "2"}));
  EXPECT_EQ(split("", ','), (V{""}));
  EXPECT_EQ(split(",", ','), (V{"", ""}));
  EXPECT_EQ(split("a,,b,", ','), (V{"a", "", "b", ""}));
  EXPECT_EQ(split("/etc/cdi:/var/run/cdi", ':'), (V{"/etc/cdi", "/var/run/cdi"}));
  for (const V& parts : {V{""}, V{"x"}, V{"", "b"}, V{"a", "", ""}, V{"GPU-1", "MIG-2", " 3 "}})
    EXPECT_EQ(split(join(parts, ","), ','), parts) << join(parts, "|");
}

TEST(Text, AsciiLowerChangesOnlyTheLettersAToZ) {
  EXPECT_EQ(ascii::lower("Transfer-Encoding: CHUNKED"), "transfer-encoding: chunked");
  EXPECT_EQ(ascii::lower("GPU-A04764CC_Z@[`{"), "gpu-a04764cc_z@[`{");  // '@' '[' '`' '{' sit beside A-Z and a-z
  const std::string utf8 = "\xc3\x89\xce\xa3";                          // UTF-8 bytes pass unchanged
  EXPECT_EQ(ascii::lower("N" + utf8 + "E"), "n" + utf8 + "e");
  EXPECT_EQ(ascii::lower(""), "");
}

TEST(Text, DidYouMeanOffersTheClosestWithinTwoEdits) {
  EXPECT_EQ(did_you_mean("memroy_used_mib", {"memory_total_mib", "memory_used_mib"}), " (did you mean `memory_used_mib`?)");
  EXPECT_EQ(did_you_mean("lst", {"list", "map"}), " (did you mean `list`?)");
  EXPECT_EQ(did_you_mean("frobnicate", {"list", "map"}), "");
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);  // a swap is one edit
}

}  // namespace
}  // namespace gpumap
