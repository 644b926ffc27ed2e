// What /proc says about one process, as plain values: os/proc.h reads it (ProcFs), the ps join
// (resolve/process_view.h) and its rules (findings/ps_rules.h) take it as a value.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// How one read went.  kGone: no such process (it exited, or never existed here);
/// kDenied: EACCES/EPERM (another user's process); kError: any other failure.
enum class ProcAccess { kOk, kGone, kDenied, kError };
/// "ok", "gone", "denied", "error".
const char* proc_access_name(ProcAccess a);

/// What /proc says about one process.  Every field may be unknown (nullopt).
struct ProcProcess {
  uint32_t pid = 0;                           // the directory name under the proc root
  ProcAccess access = ProcAccess::kOk;        // of <root>/<pid>/status: kGone means exited
  bool zombie = false;                        // status "State: Z": exited, not yet reaped
  std::optional<uint32_t> uid;                // real uid (status "Uid:")
  std::optional<std::string> user;            // login name, else the uid as digits
  std::optional<std::string> command;         // cmdline, arguments joined by spaces; "[comm]" when empty
  std::optional<std::vector<std::string>> argv;  // cmdline split at its NULs; nullopt or empty: unknown (kernel thread)
  ProcAccess environ_access = ProcAccess::kGone;
  std::string environ_error;                  // strerror text when environ_access is not kOk
  std::optional<std::vector<std::string>> environ;  // NAME=VALUE as at exec; nullopt: unreadable
  std::optional<std::vector<uint32_t>> nspid;  // status "NSpid:", outermost (this procfs's) first
};

}  // namespace gpumap
