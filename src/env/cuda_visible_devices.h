// CUDA_VISIBLE_DEVICES read the way the CUDA driver reads it (measured on driver
// 580.159.04, see docs/driver-rules.md and tests/vectors/).  Pure: no I/O.
//
// Lexical rules (this file); matching against the GPUs is resolve/cuda_view.h:
//  - the value is split on ',' only; each piece is one entry, empty ones included;
//  - an entry that starts with exactly "GPU-" or "MIG-" (no leading space, upper case)
//    is a UUID prefix: hex digits in either case, '-' skipped; once 32 digits are read
//    the rest is ignored, before that any other character makes it invalid;
//  - any other entry is read like strtoul(s, &end, 10): leading white space and a sign
//    are accepted, what follows the digits is ignored, and the result is cut to 32 bits
//    (4294967297 is GPU 1, -1 and overflow name no GPU); no digit at all is invalid.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumap {

enum class CvdEntryKind {
  kInteger,  // an index into CUDA's device order
  kUuid,     // a GPU-/MIG- UUID prefix
  kInvalid,  // names no GPU whatever the host (no digits, bad UUID characters, empty)
};

struct CvdEntry {
  std::string raw;       // the entry exactly as written
  CvdEntryKind kind = CvdEntryKind::kInvalid;
  uint64_t index = 0;    // kInteger: the value CUDA uses (after the 32-bit cut)
  bool negative = false; // kInteger: written with a minus sign and not zero (`-1`): names no GPU
  std::string uuid_hex;  // kUuid: lower-case hex digits of the prefix, no dashes
  std::string reason;    // kInvalid: why; otherwise a quirk worth telling ("';0' ignored"), or ""
};

/// Splits and reads every entry.  An unset variable is not a list: callers check that first.
std::vector<CvdEntry> parse_cuda_visible_devices(std::string_view value);

}  // namespace gpumap
