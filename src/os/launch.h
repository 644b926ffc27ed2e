// The launch seam: CPU lists and affinity, exec of a user's command (PATH lookup, never a
// shell), and fork+exec with gpumap staying as the parent that forwards signals.
#pragma once
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

/// Parses a Linux cpu list ("0-3,8,10-11"); nullopt with `error` naming the bad part.
std::optional<std::vector<int>> parse_cpu_list(const std::string& text, std::string* error = nullptr);
/// Formats sorted CPUs as a cpu list ("0-3,8").
std::string format_cpu_list(const std::vector<int>& cpus);
/// The CPUs this process may run on (sched_getaffinity); empty when unknown.
std::vector<int> current_affinity();

/// The CPUs to bind to: the union of `gpu_cpu_lists` intersected with `inherited`.  Empty when
/// no list is known, one does not parse, or the intersection is empty; `why` says which.
std::vector<int> cpus_near(const std::vector<std::optional<std::string>>& gpu_cpu_lists,
                           const std::vector<int>& inherited, std::string* why);

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH like execvp
  std::vector<std::string> env;   // the whole environment, "NAME=VALUE"
  std::vector<int> cpus;          // empty: keep the inherited affinity
  std::vector<int> keep_fds;      // launch_and_wait: O_CLOEXEC descriptors the command inherits (leases)
  std::function<void(pid_t)> on_started;  // launch_and_wait: called with the job's pid (= its group)
};

struct LaunchResult {
  int exit_code = 0;    // the child's exit status, 128+signal when a signal killed it,
                        // 127 (not found) or 126 (not executable) when exec failed
  int term_signal = 0;  // the signal that killed it, 0 if it exited
  std::string exec_error;  // non-empty when the program could not be started
};

/// Forks, execs spec in the child as the leader of a process group of its own, the job (affinity
/// set first, signal mask and dispositions reset, keep_fds made inheritable, and SIGTERM sent
/// to it should gpumap die first: PR_SET_PDEATHSIG), and waits for it, forwarding SIGINT,
/// SIGTERM, SIGHUP, SIGQUIT and SIGCONT sent to gpumap to the whole job's group.  When gpumap runs in
/// the terminal's foreground, the job gets the terminal (Ctrl-C and Ctrl-Z reach the job's
/// group directly; a stopped job stops gpumap's own group and resumes with it) and gets it back
/// afterwards.  Other descriptors gpumap opened O_CLOEXEC are never inherited by the command.
LaunchResult launch_and_wait(const LaunchSpec& spec);

/// Replaces this process with spec (affinity first).  Returns only on failure: throws
/// Error(127 or 126) naming the program.
[[noreturn]] void exec_replace(const LaunchSpec& spec);

}  // namespace gpumap
