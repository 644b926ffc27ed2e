// CUDA_VISIBLE_DEVICES read the way the CUDA driver reads it (measured on driver
// 580.159.04, see docs/driver-rules.md and tests/vectors/).  Pure: no I/O.
//
// Lexical rules (this file); matching against the GPUs is resolve/cuda_rules.h:
//  - the value is split on ',' only; each piece is one entry, empty ones included;
//  - an entry that starts with exactly "GPU-" or "MIG-" (no leading space, upper case)
//    is a UUID prefix: hex digits in either case, '-' skipped; at most 36 characters after
//    the prefix are read (dashes count), and reading stops at the 32nd digit; what is not
//    read is ignored, any other character in what is read makes it invalid; nothing after
//    the prefix is invalid, only dashes an empty prefix (every GPU matches);
//  - any other entry is read like strtoul(s, &end, 10): leading white space and a sign
//    are accepted, what follows the digits is ignored, and the result is cut to 32 bits
//    (4294967297 is GPU 1, -1 and overflow name no GPU); no digit at all is invalid.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/cuda_view.h"  // CvdEntry

namespace gpumap {

/// Characters the driver reads after "GPU-"/"MIG-" (measured: 36 dashes then `z` names the GPU,
/// 35 dashes then `z` nothing).
inline constexpr size_t kUuidEntryWindow = 36;

/// Splits and reads every entry.  An unset variable is not a list: callers check that first.
std::vector<CvdEntry> parse_cuda_visible_devices(std::string_view value);

}  // namespace gpumap
