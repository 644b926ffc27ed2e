#include "http/conn_states.h"

#include <poll.h>

#include <cstddef>

namespace gpumap {

// What each state of a connection means to serve's loop: one row each (ConnStateRow's fields, in
// order).  docs/metrics.md's table "A connection's states" is checked against these rows.
const std::vector<ConnStateRow>& connection_states() {
  using S = ConnState;
  using D = ConnDeadline;
  using P = OnDeadline;
  using R = RankCase;
  using H = Hangup;
  constexpr int kNever = kNeverEvicted;
  static const std::vector<ConnStateRow> rows = {
      // state          name            poll      TLS    deadline     past it                 rank rank_if when   counted asks  hang-up
      {S::kConnected,   "connected",    POLLIN,    true,  D::kRequest, P::kAnswer408AndClose, 0,     1,     R::kBytesWaiting, false, false, H::kReadEnds},
      {S::kReadingHead, "reading-head", POLLIN,    true,  D::kRequest, P::kAnswer408AndClose, 1,     1,     R::kAlways,       false, false, H::kReadEnds},
      {S::kAuthWait,    "auth-wait",    POLLRDHUP, false, D::kRequest, P::kAnswer503,         kNever, kNever, R::kAlways,      false, true,  H::kPollRdhup},
      {S::kQueued,      "queued",       POLLRDHUP, false, D::kNone,    P::kNothing,           kNever, kNever, R::kAlways,      true,  true,  H::kPollRdhup},
      {S::kWriting,     "writing",      POLLOUT,   true,  D::kWrite,   P::kClose,             3,     2,     R::kStalled,      false, false, H::kWriteFails},
  };
  return rows;
}

const ConnStateRow& state_row(ConnState s) { return connection_states()[static_cast<size_t>(s)]; }

short poll_events(ConnState s, bool tls_wants_read, bool tls_wants_write) {
  const ConnStateRow& row = state_row(s);
  if (row.tls_turns && tls_wants_read) return POLLIN;
  if (row.tls_turns && tls_wants_write) return POLLOUT;
  return row.events;
}

int eviction_rank(ConnState s, bool bytes_waiting, bool stalled) {
  const ConnStateRow& row = state_row(s);
  bool alt = (row.when == RankCase::kBytesWaiting && bytes_waiting) || (row.when == RankCase::kStalled && stalled);
  return alt ? row.rank_if : row.rank;
}

// serve's connections, and the transitions between their states as functions of their own.  One
// round of the loop (run): poll what each state's row waits for, take new connections (a burst,

}  // namespace gpumap
