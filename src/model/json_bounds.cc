#include "model/json_bounds.h"

#include <algorithm>

namespace gpumap {

std::optional<std::string> json_bounds_error(std::string_view text, size_t max_depth, size_t max_bytes) {
  if (text.size() > max_bytes)
    return std::to_string(text.size()) + " bytes (at most " + std::to_string(max_bytes) + ")";
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  if (deepest > max_depth)
    return "nested " + std::to_string(deepest) + " levels deep (at most " + std::to_string(max_depth) + ")";
  return std::nullopt;
}

}  // namespace gpumap
