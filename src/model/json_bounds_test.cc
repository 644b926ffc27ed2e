#include "model/json_bounds.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(JsonBounds, OrdinaryDocumentsPass) {
  EXPECT_FALSE(json_bounds_error(R"({"a": [1, {"b": [2]}], "c": "x"})"));
  EXPECT_FALSE(json_bounds_error(""));
  EXPECT_FALSE(json_bounds_error(std::string(64, '[') + std::string(64, ']')));
}

TEST(JsonBounds, DeepNestingIsRefusedWithTheDepth) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto e = json_bounds_error(deep);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, "nested 100000 levels deep (at most 64)");
  EXPECT_TRUE(json_bounds_error(std::string(65, '{')));  // unclosed counts too
}

TEST(JsonBounds, BracketsInStringsDoNotCount) {
  std::string s = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  EXPECT_FALSE(json_bounds_error(s));
}

TEST(JsonBounds, SizeIsBounded) {
  auto e = json_bounds_error("[1, 2]", 64, 4);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, "6 bytes (at most 4)");
}

}  // namespace
}  // namespace gpumap
