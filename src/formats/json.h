// The JSON tree that gpumap's file formats and its command output are built from, and its text.
// Ordered: keys stay in the order they were set, so files and documents read as written.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpumap {

using Json = nlohmann::ordered_json;

template <class T>
Json json_or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

/// JSON text (indented, or one line) with a trailing newline.  Invalid UTF-8 from the driver
/// or /proc is replaced (U+FFFD), never a crash.
std::string dump(const Json& j, bool one_line = false);

}  // namespace gpumap
