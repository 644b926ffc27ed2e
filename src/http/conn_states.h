// The states of a connection to `gpumap serve`'s HTTP server (http/server.h), as a table: what
// each state waits for, its deadline, its eviction rank, whether it holds a request slot.  Pure.
#pragma once
#include <vector>

namespace gpumap {

/// The states of a connection in HttpServer::serve.  What each means for the server is one row of
/// connection_states(): serve's loop reads the rows, and docs/metrics.md ("A connection's states")
/// is checked against them by a test.  Adding a state is one enum value, one row and its transition
/// (HttpServer::Loop in http/server.cc).
enum class ConnState {
  kConnected,    // accepted; no byte heard yet
  kReadingHead,  // bytes heard (a request's first bytes, a TLS hello); the head not complete
  kAuthWait,     // its head is in; its credentials are being checked (BasicAuth)
  kQueued,       // admitted: waiting for the handler's answer (holds a max_requests slot)
  kWriting,      // its answer is being written
};
/// Which limit's clock ends a state.
enum class ConnDeadline {
  kNone,
  kRequest,  // HttpLimits::request_timeout_s from the connection's start
  kWrite,    // HttpLimits::write_timeout_s from the answer made
};
/// What passing that deadline does.
enum class OnDeadline {
  kNothing,
  kAnswer408AndClose,  // 408 written once, never waited for (not under TLS); closed
  kAnswer503,          // answered 503: the state becomes kWriting
  kClose,
};
/// When a state's eviction rank is `rank_if` rather than `rank`.
enum class RankCase {
  kAlways,        // (always `rank`)
  kBytesWaiting,  // bytes (or its close) wait unread on the socket
  kStalled,       // the client took none of the answer's bytes for a second
};
/// How a client's hang-up is seen in a state; each closes the connection.
enum class Hangup {
  kReadEnds,    // the read returns its end (or fails)
  kPollRdhup,   // poll reports POLLRDHUP, POLLHUP or POLLERR
  kWriteFails,  // a half-close is not seen; a reset fails the write
};
constexpr int kNeverEvicted = -1;

struct ConnStateRow {
  ConnState state;
  const char* name;       // as docs/metrics.md names it
  short events;           // what poll waits for
  bool tls_turns;         // under TLS: POLLIN or POLLOUT as OpenSSL's last call wants, instead
  ConnDeadline deadline;
  OnDeadline on_deadline;
  int rank;               // eviction rank to make room: 0 closed first ... 3 last; kNeverEvicted
  int rank_if;            // the rank when `when` holds
  RankCase when;
  bool counted;           // holds a slot among HttpLimits::max_requests
  bool asks_again;        // asked again at least every 50 ms (the handler, the credential check)
  Hangup hangup;
};
/// One row per ConnState, in the enum's order.
const std::vector<ConnStateRow>& connection_states();
const ConnStateRow& state_row(ConnState s);
/// What poll waits for in state `s`, given what OpenSSL's last call wants (false, false: plain HTTP).
short poll_events(ConnState s, bool tls_wants_read, bool tls_wants_write);
/// The eviction rank in state `s` (kNeverEvicted, or 0..3: the lowest is closed first).
int eviction_rank(ConnState s, bool bytes_waiting, bool stalled);

}  // namespace gpumap
