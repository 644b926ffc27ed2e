// Basic authentication for `gpumap serve` (http/server.h), as the web config's basic_auth_users
// say (os/web_config.h): bcrypt checks on a thread of their own, answers remembered.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace gpumap {

/// Basic authentication against a web config's users.  The bcrypt checks run on a thread of their
/// own, one at a time, never on the server's loop: a request waiting for its check holds only its
/// own connection, and /healthz, a cached login or any other request is answered meanwhile.  Each
/// answer is remembered, the failures too (bounded: kMaxAllowed and kMaxDenied, by user and a
/// SHA-256 of the password, never the password), so a repeated login costs no check.  An unknown
/// user is checked against a hash of the default cost (10), as much work as a known one of that
/// cost, so the time does not tell which users exist.  The checks wait in a queue per client
/// address, taken in turn (round robin), and within an address a user of the config before an
/// unknown one: a flood of logins from one address delays another address's first login by one
/// check of each address waiting, never shuts it out (issue 56 item 3).  At most kMaxQueued checks
/// wait per address and kMaxQueuedTotal in all; past either a request is answered 503 at once.
class BasicAuth {
 public:
  /// Whether `password` matches `hash` (password_matches; tests pass one they can hold).
  using Verify = std::function<bool(const std::string& password, const std::string& hash)>;
  static constexpr size_t kMaxQueued = 16, kMaxQueuedTotal = 256, kMaxAllowed = 256, kMaxDenied = 4096;
  static constexpr int kDefaultCost = 10;

  explicit BasicAuth(std::map<std::string, std::string> users, Verify verify = nullptr);
  /// Stops the checking thread; a check under way is not waited for (SIGTERM stops serve at once).
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  enum class Verdict { kAllowed, kDenied, kPending, kBusy };
  /// The answer for `authorization` ("Basic base64(user:password)"): from memory, kDenied at once
  /// when malformed, else kPending (the check is queued; ask again when wake_fd() is readable)
  /// or kBusy (kMaxQueued checks of `peer`, the client's address, or kMaxQueuedTotal in all,
  /// already wait).  Never runs bcrypt itself.
  Verdict check(const std::string& authorization, const std::string& peer = "");
  /// Readable after each finished check (the server drains it).
  int wake_fd() const;
  /// check(), waiting for a pending answer (kBusy: false).
  bool allows(const std::string& authorization);
  bool enabled() const { return !users_.empty(); }
  /// How many bcrypt checks ran (for tests).
  size_t checks_run() const;

  struct State;  // shared with the checking thread (http/basic_auth.cc)

 private:
  std::shared_ptr<State> st_;
  std::map<std::string, std::string> users_;  // user -> bcrypt hash
  std::string dummy_hash_;
};

}  // namespace gpumap
