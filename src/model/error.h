// Errors that end a command: a message that names the input and the fix, and an exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace gpumap {

/// Exit codes, documented in docs/cli.md.  Scripts may rely on them.
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,          // a driver call or the OS failed at run time
  kExitUsage = 2,          // bad command line or input file
  kExitNoDriver = 3,       // no NVIDIA driver library could be loaded / initialised
  kExitMismatch = 4,       // verify: the GPUs differ from what was expected
  kExitCudaWouldFail = 5,  // verify: cuInit would fail in this environment
  kExitUnavailable = 6,    // pick/run/bind: not enough GPUs qualify (or --wait ran out)
  kExitFindings = 7,       // doctor, job: a finding of severity "error"; ps --fail-on: one that severe
  kExitTooLate = 8,        // the library only (gpumap_pin): CUDA already runs in the calling process
  kExitPartial = 9,        // job: a node of the job gave no report; the others are shown
};

class Error : public std::runtime_error {
 public:
  Error(int exit_code, const std::string& message, std::string hint = "")
      : std::runtime_error(message), exit_code_(exit_code), hint_(std::move(hint)) {}
  int exit_code() const { return exit_code_; }
  const std::string& hint() const { return hint_; }

 private:
  int exit_code_;
  std::string hint_;
};

}  // namespace gpumap
