#include "prom/promql.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(PromQL, StringLiteralsCannotBeEnded) {
  EXPECT_EQ(promql_string("plain"), "\"plain\"");
  EXPECT_EQ(promql_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(promql_string("l1\nl2\t\x01"), "\"l1\\nl2\\t\\x01\"");
  EXPECT_EQ(promql_string("Å"), "\"Å\"");
}

TEST(PromQL, RegexLiteralsMatchOnlyThemselves) {
  EXPECT_EQ(re2_literal("node-1.example"), "node\\-1\\.example");
  EXPECT_EQ(re2_literal("a|b.*(c)"), "a\\|b\\.\\*\\(c\\)");
  EXPECT_EQ(re2_literal("x\ny"), "x\\x{0a}y");
}

TEST(PromQL, AHostileValueStaysOneLabelValue) {
  // A value that tries to close the matcher and add a query of its own.
  std::string hostile = "x\"} or vector(1) or up{a=~\".*";
  std::string m = label_matcher("instance", {hostile});
  EXPECT_EQ(m.rfind("instance=~\"", 0), 0u);
  // Read back as PromQL would: the string ends only at its last character.
  size_t quote = m.find('"');
  bool escaped = false;
  size_t end = std::string::npos;
  for (size_t i = quote + 1; i < m.size(); ++i) {
    if (escaped) escaped = false;
    else if (m[i] == '\\') escaped = true;
    else if (m[i] == '"') {
      end = i;
      break;
    }
  }
  EXPECT_EQ(end, m.size() - 1) << m;
  // Unescaped as PromQL reads a string, it is the regex of exactly that value.
  std::string inner;
  for (size_t i = quote + 1; i < end; ++i) inner += m[i] == '\\' ? m[++i] : m[i];
  EXPECT_EQ(inner, "(?:" + re2_literal(hostile) + ")");
  for (char c : std::string("\"{}()|.*=~ "))
    for (size_t at = re2_literal(hostile).find(c); at != std::string::npos; at = re2_literal(hostile).find(c, at + 1))
      EXPECT_EQ(re2_literal(hostile)[at - 1], '\\') << "unescaped " << c;
}

TEST(PromQL, SelectorsAndAlternatives) {
  EXPECT_EQ(selector("up", {}), "up");
  EXPECT_EQ(selector("up", {"", label_matcher("job", {"a", "b"})}), "up{job=~\"(?:a|b)\"}");
  EXPECT_EQ(label_matcher("name", {"h100"}, "(?i).*", ".*"), "name=~\"(?i).*(?:h100).*\"");
  EXPECT_EQ(label_matcher("name", {}), "");
}

}  // namespace
}  // namespace gpumap
