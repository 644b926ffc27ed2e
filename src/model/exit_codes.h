// The exit codes as data: the one table --help's line, the man page, `__describe` and the C
// header's check are made from.
#pragma once
#include <cstddef>

#include "model/error.h"

namespace gpumap {

/// One entry per ExitCode, in order: --help's line, the man page's EXIT STATUS
/// (with the commands that use each code, from the command table), `__describe`.  The C API's
/// status codes (include/gpumap/gpumap.h) are the same numbers: src/capi checks it at compile time.
struct ExitCodeInfo {
  int code;
  const char* brief;    // "usage" (for --help's one line)
  const char* meaning;  // the full sentence (man page)
};

inline constexpr ExitCodeInfo kExitCodes[] = {
    {kExitOk, "ok", "success (map also exits 0 when it reports that CUDA would fail: the report succeeded)"},
    {kExitError, "driver/OS error", "a driver call or the OS failed at run time"},
    {kExitUsage, "usage", "usage: unknown option or command, bad value, bad or unknown host file, bad GPU argument"},
    {kExitNoDriver, "no driver",
     "no driver: libnvidia-ml.so.1 or libcuda.so.1 cannot be loaded, a required symbol is missing, or nvmlInit failed"},
    {kExitMismatch, "verify mismatch or snapshot differs",
     "the GPUs differ from what was expected: verify --expect, map --check (prediction and driver disagree), "
     "snapshot diff and verify --snapshot (the host differs from the snapshot)"},
    {kExitCudaWouldFail, "CUDA would fail", "cuInit would fail in this environment"},
    {kExitUnavailable, "not enough GPUs", "not enough GPUs qualify (or --wait ran out)"},
    {kExitFindings, "found errors", "at least one finding of severity error (ps --fail-on: of the severity asked or worse)"},
    {kExitTooLate, "too late (library)",
     "the library only (gpumap_pin, gpumap.pin()): CUDA already runs in the calling process, so a "
     "CUDA_VISIBLE_DEVICES set now would change nothing; no command exits with it"},
    {kExitPartial, "partial report",
     "a node gave no report (it did not answer within --timeout, its slurmd is down, or its ps failed): the "
     "report covers the nodes that answered and names the others; a finding of severity error still exits 7"},
};

namespace exit_code_detail {
constexpr bool one_per_code_in_order() {
  int n = 0;
  for (const ExitCodeInfo& e : kExitCodes)
    if (e.code != n++) return false;
  return n == kExitPartial + 1;
}
}  // namespace exit_code_detail
static_assert(exit_code_detail::one_per_code_in_order(), "kExitCodes lists each ExitCode once, in order");

}  // namespace gpumap
