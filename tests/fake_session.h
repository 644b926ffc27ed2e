// FakeSession: an operation's whole world in process, for the tests that assert on its answer
// struct (session/<operation>_test.cc).  A simulated host (a bundled one, or one edited here), the
// simulated driver libraries loaded in this process (build/sim, as `--simulate` loads them), a
// given environment, private lease, cache and state folders, and a /proc of fixture entries for
// the host's GPU processes.  No gpumap process is started, except the driver probe child that
// `--probe`/`--check` start in real use too.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/error.h"
#include "session/session.h"

namespace gpumap::testing {

/// A process of the fixture /proc: what ps, metrics and job read of it.
struct FakeProcess {
  uint32_t pid = 0;
  std::vector<std::string> argv = {"python3", "train.py"};
  /// Its environment at start (/proc/PID/environ); nullopt: unreadable (another user's).
  std::optional<std::vector<std::string>> environ = std::vector<std::string>{};
  uint32_t uid = 0;
  std::vector<uint32_t> nspid;  // NSpid: beyond its own pid, its numbers in nested namespaces
  uint32_t ppid = 1;            // PPid: its parent
};

class FakeSession {
 public:
  /// `host`: a bundled host name ("h200x2", "dgx8", "mig", "seed-mixed") or a test host
  /// (tests/hosts/NAME.json); `env`: the process environment ("NAME=VALUE").
  explicit FakeSession(const std::string& host, std::vector<std::string> env = {});

  /// Runs `p` on the host's GPU `nvml_index` using `mib` of its memory, and gives it a /proc entry.
  /// Before the first session().
  FakeSession& with_process(uint32_t nvml_index, const FakeProcess& p, uint64_t mib = 256);
  /// Gives `p` a /proc entry only: a process on no GPU (a launcher, a shell).
  FakeSession& with_proc_entry(const FakeProcess& p);
  /// The host file's JSON, to edit before the first session().
  nlohmann::json& host() { return host_; }
  /// The seams the session gets (edit before the first session()).
  Seams& seams() { return seams_; }

  /// The session (made on first use from the host, environment and seams as they are then).
  Session& session();
  /// A second session over the same host, folders and /proc with another environment (a second
  /// process of the same machine: another rank, another shell).
  Session other(std::vector<std::string> env);

  const std::string& dir() const { return dir_; }       // the private folder
  std::string proc_root() const { return dir_ + "/proc"; }
  std::string lease_dir() const { return dir_ + "/locks"; }

 private:
  std::string host_file();

  std::string dir_;
  nlohmann::json host_;
  std::vector<std::string> env_;
  Seams seams_;
  std::string host_file_;
  std::unique_ptr<Session> session_;
};

/// The exit code an operation refuses with (its Error's), 0 when it returns.
inline int code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

}  // namespace gpumap::testing
