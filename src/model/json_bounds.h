// One bound for every JSON document gpumap reads (snapshots, host files, lease records, the
// C API's arguments): a document nested deeper than this, or larger, is refused before it is
// parsed.  nlohmann's parser is iterative, but copying, printing and destroying a value recurse
// once per level: 100 000 levels overflowed the stack (issue 20).  No real document nests
// deeper than a handful of levels.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpumap {

inline constexpr size_t kJsonMaxDepth = 64;
inline constexpr size_t kJsonMaxBytes = size_t{64} << 20;  // 64 MiB: a 16 384-GPU host file is ~20 MiB

/// Why `text` exceeds the bounds ("nested 100000 levels deep (at most 64)", "70000000 bytes
/// (at most 67108864)"), or nothing.  Brackets inside strings do not count; the text need not be
/// valid JSON (the parser says what else is wrong).
std::optional<std::string> json_bounds_error(std::string_view text, size_t max_depth = kJsonMaxDepth,
                                             size_t max_bytes = kJsonMaxBytes);

}  // namespace gpumap
