// The kernel log, read as /dev/kmsg serves it: every record still in the ring since boot, without
// waiting (O_NONBLOCK: EAGAIN ends the read).  Reading it needs root or CAP_SYSLOG where
// kernel.dmesg_restrict is 1 (EPERM otherwise): the answer then says so and holds no lines.
#pragma once
#include <string>

namespace gpumap {

struct KmsgRead {
  std::string path;
  bool readable = false;
  int error = 0;          // errno of the open or read that failed (EPERM: no CAP_SYSLOG)
  std::string problem;    // in words, with the fix, when not readable
  std::string text;       // the records, each ending in '\n' (only those naming NVRM are kept)
  size_t records = 0;     // records read
};

/// Reads `path` (/dev/kmsg, or a regular file of the same lines for tests) up to `max_bytes` of
/// kept records.  Never throws.
KmsgRead read_kmsg(const std::string& path = "/dev/kmsg", size_t max_bytes = 8u << 20);

}  // namespace gpumap
