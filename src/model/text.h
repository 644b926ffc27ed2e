// Small text helpers shared by every layer.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumap {

/// "a, b, c" for join({"a","b","c"}, ", ").
std::string join(const std::vector<std::string>& parts, const std::string& sep);

/// A plain non-negative decimal that fits in 9 digits ("0".."999999999"): no sign, no
/// spaces, no trailing text.  For launcher and container variables, which are read strictly.
bool parse_small_uint(std::string_view s, uint32_t& out);

}  // namespace gpumap
