// The exec seam: run a program with a given environment and capture its output.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

struct ProcResult {
  int exit_code = -1;     // the exit status, or 128+signal
  bool timed_out = false; // killed after the timeout
  std::string out, err;
  std::string spawn_error;  // non-empty when the program could not be started
};

/// Runs argv[0] (a path) with exactly `env` ("NAME=VALUE"), no shell, no stdin; killed after
/// `timeout_ms`, and (PR_SET_PDEATHSIG) when the calling thread or process dies first.
ProcResult run_capture(const std::vector<std::string>& argv, const std::vector<std::string>& env, int timeout_ms);

/// `name` looked up in `path` (a $PATH value; nullopt: execvp's default) like execvp (a name with
/// a '/' is returned as is); "" when not found.
std::string find_program(const std::string& name, const std::optional<std::string>& path);

/// The path of the running gpumap binary (/proc/self/exe).
std::string self_exe();
/// The folder holding it, "." when unknown.
std::string exe_dir();

}  // namespace gpumap
