// The kernel log's NVRM lines (formats/kernel_log.h): any bytes give a KernelLog, never a throw or
// a crash; each Xid kept has a message from "NVRM: Xid (" within the line limit, at most
// kMaxKernelXids of them, and the lines counted are at most the input's newlines plus one.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/kernel_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  gpumap::KernelLog log = gpumap::parse_kernel_log(in);
  size_t newlines = 0;
  for (char c : in) newlines += c == '\n';
  if (log.lines > newlines + 1) abort();
  if (log.xids.size() > gpumap::kMaxKernelXids) abort();
  for (const gpumap::KernelXid& x : log.xids) {
    if (x.message.rfind("NVRM: Xid (", 0) != 0 || x.message.size() > gpumap::kMaxKernelLineBytes) abort();
    if (x.pid && *x.pid == 0) abort();
    (void)gpumap::kernel_uuid_of(log, x);
  }
  return 0;
}
