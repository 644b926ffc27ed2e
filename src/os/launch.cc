#include "os/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <termios.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "model/error.h"
#include "model/text.h"

namespace gpumap {
namespace {

constexpr int kMaxCpus = 8192;

/// argv/env as the char* arrays exec wants; built before fork (no allocation in the child).
struct ExecArrays {
  std::vector<std::string> strings_argv, strings_env;
  std::vector<char*> argv, envp;
  explicit ExecArrays(const LaunchSpec& s) : strings_argv(s.argv), strings_env(s.env) {
    for (std::string& a : strings_argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : strings_env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
};

/// A CPU mask for sched_setaffinity, built before fork.
struct CpuMask {
  cpu_set_t* set = nullptr;
  size_t size = 0;
  explicit CpuMask(const std::vector<int>& cpus) {
    if (cpus.empty()) return;
    set = CPU_ALLOC(kMaxCpus);
    size = CPU_ALLOC_SIZE(kMaxCpus);
    CPU_ZERO_S(size, set);
    for (int c : cpus)
      if (c >= 0 && c < kMaxCpus) CPU_SET_S(static_cast<size_t>(c), size, set);
  }
  ~CpuMask() {
    if (set) CPU_FREE(set);
  }
  void apply() const {
    if (set) sched_setaffinity(0, size, set);  // best effort: a refused mask leaves the inherited one
  }
};

/// The controlling terminal when gpumap's process group is its foreground group, else -1.
int foreground_terminal() {
  int tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty < 0) return -1;
  if (tcgetpgrp(tty) != getpgrp()) {
    close(tty);
    return -1;
  }
  return tty;
}

int exec_errno_code(int e) { return e == ENOENT || e == ENOTDIR ? 127 : 126; }

std::string exec_message(const std::string& program, int e) {
  return "cannot run `" + program + "`: " + std::strerror(e);
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(const std::string& text, std::string* error) {
  std::set<int> out;
  auto fail = [&](const std::string& part) -> std::optional<std::vector<int>> {
    if (error) *error = "`" + part + "` in cpu list `" + text + "` is not N or N-M";
    return std::nullopt;
  };
  auto number = [](const std::string& s, int& v) {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
    v = std::stoi(s);
    return v < kMaxCpus;
  };
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.empty()) return std::vector<int>{};
  for (const std::string& part : split(t, ',')) {
    size_t dash = part.find('-');
    int a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!number(part, a)) return fail(part);
      b = a;
    } else if (!number(part.substr(0, dash), a) || !number(part.substr(dash + 1), b) || b < a) {
      return fail(part);
    }
    for (int c = a; c <= b; ++c) out.insert(c);
  }
  return std::vector<int>(out.begin(), out.end());
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::vector<int> c = cpus;
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  std::string out;
  for (size_t i = 0; i < c.size();) {
    size_t j = i;
    while (j + 1 < c.size() && c[j + 1] == c[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(c[i]) + (j > i ? "-" + std::to_string(c[j]) : "");
    i = j + 1;
  }
  return out;
}

std::vector<int> current_affinity() {
  std::vector<int> out;
  cpu_set_t* set = CPU_ALLOC(kMaxCpus);
  size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set);
  if (sched_getaffinity(0, size, set) == 0)
    for (int c = 0; c < kMaxCpus; ++c)
      if (CPU_ISSET_S(static_cast<size_t>(c), size, set)) out.push_back(c);
  CPU_FREE(set);
  return out;
}

std::vector<int> cpus_near(const std::vector<std::optional<std::string>>& gpu_cpu_lists,
                           const std::vector<int>& inherited, std::string* why) {
  std::set<int> near;
  for (const auto& l : gpu_cpu_lists) {
    if (!l || l->empty()) {
      if (why) *why = "a GPU's CPU affinity is unknown (the driver did not report it)";
      return {};
    }
    std::string err;
    auto cpus = parse_cpu_list(*l, &err);
    if (!cpus) {
      if (why) *why = err;
      return {};
    }
    near.insert(cpus->begin(), cpus->end());
  }
  if (near.empty()) {
    if (why) *why = "no GPU given";
    return {};
  }
  if (inherited.empty()) {
    if (why) *why = "this process's own CPU affinity could not be read";
    return {};
  }
  std::vector<int> out;
  for (int c : inherited)
    if (near.count(c)) out.push_back(c);
  if (out.empty() && why)
    *why = "the GPUs' local CPUs (" + format_cpu_list({near.begin(), near.end()}) +
           ") and the CPUs this process may use (" + format_cpu_list(inherited) + ") do not overlap";
  return out;
}

LaunchResult launch_and_wait(const LaunchSpec& spec) {
  LaunchResult r;
  if (spec.argv.empty()) throw Error(kExitUsage, "no command to run", "put the command after `--`");
  ExecArrays arrays(spec);
  CpuMask mask(spec.cpus);

  // SIGCHLD ignored (inherited) would let the kernel reap the child and lose its status.
  struct sigaction dfl{}, old_chld{};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, &old_chld);

  sigset_t watched, old, with_ttou;
  sigemptyset(&watched);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGCONT}) sigaddset(&watched, s);
  with_ttou = watched;
  sigaddset(&with_ttou, SIGTTOU);  // tcsetpgrp from a background group is allowed while SIGTTOU is blocked
  sigprocmask(SIG_BLOCK, &with_ttou, &old);
  int tty = foreground_terminal();
  auto restore = [&] {
    if (tty >= 0) {
      tcsetpgrp(tty, getpgrp());  // the terminal back to gpumap's group
      close(tty);
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
    sigaction(SIGCHLD, &old_chld, nullptr);
  };

  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    restore();
    throw Error(kExitError, std::string("pipe: ") + std::strerror(e));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(status_pipe[0]);
    close(status_pipe[1]);
    restore();
    throw Error(kExitError, std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    close(status_pipe[0]);
    // Should gpumap die (even by SIGKILL), end the command too; the leases it inherited stay
    // held until the job's last process has exited, whatever the command does with SIGTERM.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    setpgid(0, 0);  // the job: one group that gpumap's forwarded signals reach as a whole
    if (tty >= 0) tcsetpgrp(tty, getpid());
    for (int fd : spec.keep_fds) fcntl(fd, F_SETFD, 0);
    sigaction(SIGCHLD, &old_chld, nullptr);  // the command inherits what gpumap inherited
    sigprocmask(SIG_SETMASK, &old, nullptr);
    mask.apply();
    execvpe(arrays.argv[0], arrays.argv.data(), arrays.envp.data());
    int e = errno;
    ssize_t ignored = write(status_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(exec_errno_code(e));
  }
  setpgid(pid, pid);  // also here: whichever runs first, the group exists before signals go to it
  if (tty >= 0) tcsetpgrp(tty, pid);
  if (spec.on_started) spec.on_started(pid);
  close(status_pipe[1]);
  int exec_errno = 0;
  ssize_t n;
  do n = read(status_pipe[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) r.exec_error = exec_message(spec.argv[0], exec_errno);

  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG | (tty >= 0 ? WUNTRACED : 0));
    if (w == pid && WIFSTOPPED(status)) {
      // Ctrl-Z stopped the job: stop gpumap's group too, so the shell sees the job stopped;
      // on `fg` take the terminal for the job again, and continue it.
      tcsetpgrp(tty, getpgrp());
      kill(0, SIGSTOP);
      if (tcgetpgrp(tty) == getpgrp()) tcsetpgrp(tty, pid);
      kill(-pid, SIGCONT);
      continue;
    }
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      status = 0;
      break;
    }
    siginfo_t si;
    struct timespec ts{0, 250 * 1000 * 1000};
    int sig = sigtimedwait(&watched, &si, &ts);
    if (sig <= 0 || sig == SIGCHLD) continue;
    // A terminal signal (Ctrl-C, hangup) that reached gpumap's group while the job was in the
    // same foreground reached the job too; with the job holding the terminal it never comes here.
    if (si.si_code == SI_KERNEL && tty >= 0) continue;
    kill(-pid, sig);
  }
  // Drop what arrived after the child ended (it has nobody to go to), then restore the mask.
  struct timespec zero{0, 0};
  while (sigtimedwait(&watched, nullptr, &zero) > 0) {
  }
  restore();
  if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
    r.exit_code = 128 + r.term_signal;
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else {
    r.exit_code = kExitError;
  }
  if (!r.exec_error.empty()) r.exit_code = exec_errno_code(exec_errno);
  return r;
}

void exec_replace(const LaunchSpec& spec) {
  if (spec.argv.empty()) throw Error(kExitUsage, "no command to run", "put the command after `--`");
  ExecArrays arrays(spec);
  CpuMask mask(spec.cpus);
  mask.apply();
  execvpe(arrays.argv[0], arrays.argv.data(), arrays.envp.data());
  int e = errno;
  throw Error(exec_errno_code(e), exec_message(spec.argv[0], e),
              e == ENOENT ? "check the program name and PATH" : "check the file's permissions");
}

}  // namespace gpumap
