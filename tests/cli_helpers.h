// Black-box helpers: run the built gpumap binary with a clean environment.
#pragma once
#include <string>
#include <vector>

#include "os/subprocess.h"

namespace gpumap::testing {

struct CliRun {
  int code = -1;
  std::string out, err;
};

/// Runs `gpumap ARGS` with only PATH, HOME (a fresh temp dir), GPUMAP_CACHE_DIR (fresh) and `env`
/// ("NAME=VALUE") set.  Aborts the test on a 60 s timeout.
CliRun gpumap(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

/// `gpumap ARGS` in this process (cli/cli_main.h, the code the binary's main() runs), with the same
/// clean environment as gpumap(), stdin from /dev/null, stdout and stderr captured: for a test
/// that needs no process of its own (no signal, no terminal, no failing stdout, no launch, no
/// second user, no `--watch`), where a process start costs ~1.7 s under the sanitizers.  The
/// data files and sim/ are those beside the built binary, and `--probe` runs it as its child.
CliRun gpumap_here(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

/// Runs any program with the same clean environment as gpumap().
CliRun run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

/// True when `bash -n` accepts `line` (a fix to paste); else `err` says why.
bool bash_accepts(const std::string& line, std::string& err);

/// The same with stdout (and stderr) on a pseudo-terminal, through util-linux `script` (package
/// bsdutils, Essential in Debian).  `out` is what the terminal showed, "\r\n" turned into "\n".
CliRun gpumap_tty(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

/// A fresh empty directory under the test temp dir.
std::string temp_dir(const std::string& tag);

/// Writes `text` to a new file in a temp dir and returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

/// For a test that runs gpumap as another user (nobody): a copy of the gpumap binary, with the
/// simulated driver libraries beside it (sim/, where gpumap looks first), in a fresh folder under the
/// test temp dir that every user can enter and read.  The checkout itself may sit in a folder only
/// its owner can enter (`mktemp -d`, /root).  Returns the copy's path.
std::string gpumap_for_other_users();

/// Whether `setpriv` can run a program as nobody (65534) here: root, setpriv installed, and the
/// user switch allowed (it is not in some containers).  Else `why` says which is missing.
bool can_run_as_nobody(std::string& why);

/// A real process for the GPU-process tests (ps, top, metrics): `sleep SECONDS` started with exactly
/// `env`, its argv[0] `name` (its command line then reads "NAME SECONDS", as a user's `python3
/// train.py` would); constructed once it has exec'd, killed and reaped on destruction (or kill()).
class Sleeper {
 public:
  explicit Sleeper(std::vector<std::string> env, const std::string& name = "sleep", int seconds = 30);
  ~Sleeper() { kill(); }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
  int pid() const { return pid_; }
  /// SIGKILL and reap now (the process has ended when it returns).
  void kill();
  /// The test reaped it itself: nothing is left to kill (its pid may be reused).
  void reaped() { pid_ = -1; }

 private:
  int pid_ = -1;
};

/// Path of a bundled host file (hosts/NAME.json in the source tree) or a test host (tests/hosts/NAME.json).
std::string host_path(const std::string& name);

}  // namespace gpumap::testing
