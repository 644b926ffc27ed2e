// The kernel log's NVIDIA lines, text to values: /dev/kmsg records ("PRI,SEQ,USEC,FLAGS;MESSAGE",
// continuation lines " KEY=VALUE" skipped), `dmesg` lines ("[  123.456789] MESSAGE") and syslog or
// journal lines ("... kernel: MESSAGE").  Pure and total: any bytes give a KernelLog (lines it
// cannot read are skipped), never an exception (fuzz/fuzz_kernel_log.cc).
//
// The driver's forms (docs/driver-rules.md, "GPU faults in the kernel log"):
//   NVRM: Xid (PCI:0000:00:06): 31, pid=4179, name=python3, channel 0x0000000a, intr 00000000. MMU Fault: ...
//   NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
//   NVRM: Xid (PCI:0000:08:00): 31, Ch 0000003b, intr 10000000. MMU Fault: ...      (no pid)
//   NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000        (older drivers)
//   NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae
#pragma once
#include <optional>
#include <string_view>

#include "model/gpu_fault.h"

namespace gpumap {

/// One line's message and time: the text after the kmsg header, dmesg's timestamp or "kernel: ".
struct KernelLine {
  uint64_t seq = 0;
  std::optional<uint64_t> usec;  // since boot
  std::string_view message;
};

/// Splits one line (without its newline); nullopt for a kmsg continuation line (" KEY=VALUE").
std::optional<KernelLine> split_kernel_line(std::string_view line);

/// The Xid in one message ("NVRM: Xid (...): N, ..."), or nullopt when it is not one.
std::optional<KernelXid> parse_xid_message(std::string_view message);

/// Every NVRM Xid and "GPU at PCI:..." line of `text` (lines split on '\n'); at most
/// kMaxKernelXids Xids, the newest kept.
KernelLog parse_kernel_log(std::string_view text);

/// The UUID the log names for an Xid's address (the last `GPU at PCI:` line for it), or "".
std::string kernel_uuid_of(const KernelLog& log, const KernelXid& x);

}  // namespace gpumap
