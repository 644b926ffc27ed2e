// A small HTTP/1.x server for `gpumap serve`: POSIX sockets and poll(2), one thread, TLS through
// OpenSSL and basic authentication (bcrypt, libcrypt) as the Prometheus exporter-toolkit's
// web-config.yml says (os/web_config.h), gzip (zlib) when the client accepts it.  It answers GET
// and HEAD on the paths its handler knows and nothing else: no file is read and nothing is run on
// a request's behalf.
//
// Every connection is bounded: the request head in size and in time (a slow or silent client is
// cut off), the connections at once (in all and per peer address), the requests being answered
// at once (past it: 503, as node_exporter's --web.max-requests), and the time to take the answer.
// The connection limits count every open connection, whatever it sent (a byte, part of a TLS
// hello, a whole request whose answer it does not read), and hold under any rate of reconnection:
// past a limit, connections 0.1 s old (a scraper's request has arrived by then and is being
// answered) are closed, the costliest first (one that sent nothing, then one still sending its
// head, then an answer stuck behind a full window, then any answer being written); past its
// address's limit that address pays, past the total the address holding the most.  At twice the
// total a new connection is taken only by closing one of the address holding the most, else
// refused.  So one address, however it behaves, never keeps a scraper on another address out.  A
// request holds its slot among max_requests until its answer is made, not while a client declines
// to read it.
// Out of descriptors (EMFILE), the server closes a connection a second old the same way (else, when it holds
// none, answers 503 through a descriptor it keeps in reserve), and stops accepting for 100 ms: it
// never spins.  A request waiting for its answer whose client hung up frees its slot.  Each answer
// closes its connection.
#pragma once
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "os/web_config.h"

namespace gpumap {

struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // without the query string
  std::chrono::steady_clock::time_point arrived;  // when its head was complete
  std::optional<double> scrape_timeout_s;  // X-Prometheus-Scrape-Timeout-Seconds, when given and > 0
  bool accept_gzip = false;                // Accept-Encoding names gzip (or *) with q > 0
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more header lines
};

struct HttpLimits {
  size_t max_request_bytes = 8192;  // the request line and headers
  double request_timeout_s = 5;     // to send them (and finish the TLS handshake), from the connection's start
  double write_timeout_s = 10;      // to take the answer
  size_t max_connections = 64;      // open at once, in all
  size_t max_per_peer = 16;         // open at once from one address
  size_t max_requests = 40;         // being answered at once (head received, answer not made); past it 503; 0: no limit
};

/// "HOST:PORT" (IPv4 dotted quad, `localhost`, or `[IPv6]`; PORT 0-65535, 0: any free port) ->
/// the host and the port; Error(kExitUsage) naming `text` otherwise.
std::pair<std::string, uint16_t> parse_listen_address(const std::string& text);
/// Whether `host` (as parse_listen_address gives it) is a loopback address (IPv4-mapped ones too).
bool is_loopback_host(const std::string& host);

/// The head of a request as received: the method, path and the headers the server reads, or an
/// HTTP status to refuse it with (400 malformed, 405 a method other than GET/HEAD, 505 not
/// HTTP/1.x).  Pure, for tests.
struct ParsedHead {
  int refuse = 0;
  std::string method, path;
  std::string authorization;               // the Authorization header's value
  std::optional<double> scrape_timeout_s;  // X-Prometheus-Scrape-Timeout-Seconds
  bool accept_gzip = false;
};
ParsedHead parse_request_head(const std::string& head);
/// Whether an Accept-Encoding value accepts gzip (a `gzip` or `*` coding whose q is not 0).
bool accepts_gzip(const std::string& accept_encoding);
/// `body` compressed as gzip (RFC 1952), by zlib.
std::string gzip_compress(const std::string& body);

/// systemd socket activation (sd_listen_fds(3)): the listening socket passed as descriptor 3 when
/// LISTEN_PID is this process and LISTEN_FDS is 1; nullopt when the variables are absent or name
/// another process.  Error(kExitUsage) when they name this process but pass other than one
/// descriptor, or descriptor 3 is not a listening TCP socket.
std::optional<int> activation_socket(const std::optional<std::string>& listen_pid,
                                     const std::optional<std::string>& listen_fds);

/// Basic authentication against a web config's users.  The bcrypt checks run on a thread of their
/// own, one at a time, never on the server's loop: a request waiting for its check holds only its
/// own connection, and /healthz, a cached login or any other request is answered meanwhile.  Each
/// answer is remembered, the failures too (bounded: kMaxAllowed and kMaxDenied, by user and a
/// SHA-256 of the password, never the password), so a repeated login costs no check.  An unknown
/// user is checked against a hash of the default cost (10), as much work as a known one of that
/// cost, so the time does not tell which users exist.  At most kMaxQueued checks wait at once;
/// past it a request is answered 503 at once.
class BasicAuth {
 public:
  /// Whether `password` matches `hash` (password_matches; tests pass one they can hold).
  using Verify = std::function<bool(const std::string& password, const std::string& hash)>;
  static constexpr size_t kMaxQueued = 16, kMaxAllowed = 256, kMaxDenied = 4096;
  static constexpr int kDefaultCost = 10;

  explicit BasicAuth(std::map<std::string, std::string> users, Verify verify = nullptr);
  /// Stops the checking thread; a check under way is not waited for (SIGTERM stops serve at once).
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  enum class Verdict { kAllowed, kDenied, kPending, kBusy };
  /// The answer for `authorization` ("Basic base64(user:password)"): from memory, kDenied at once
  /// when malformed, else kPending (the check is queued; ask again when wake_fd() is readable)
  /// or kBusy (kMaxQueued checks already wait).  Never runs bcrypt itself.
  Verdict check(const std::string& authorization);
  /// Readable after each finished check (the server drains it).
  int wake_fd() const;
  /// check(), waiting for a pending answer (kBusy: false).
  bool allows(const std::string& authorization);
  bool enabled() const { return !users_.empty(); }
  /// How many bcrypt checks ran (for tests).
  size_t checks_run() const;

  struct State;  // shared with the checking thread (http_server.cc)

 private:
  std::shared_ptr<State> st_;
  std::map<std::string, std::string> users_;  // user -> bcrypt hash
  std::string dummy_hash_;
};

/// The states of a connection in HttpServer::serve.  What each means for the server is one row of
/// connection_states(): serve's loop reads the rows, and docs/metrics.md ("A connection's states")
/// is checked against them by a test.  Adding a state is one enum value, one row and its transition
/// (HttpServer::Loop in http_server.cc).
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

/// The OpenSSL context of a web config's tls_server_config (opaque here).
struct TlsContext;

class HttpServer {
 public:
  /// Binds and listens; Error(kExitError) naming the address (in use, not permitted, ...).
  /// `web`: TLS and basic authentication (Error(kExitUsage) naming the file when a certificate or
  /// key cannot be loaded).
  /// `verify`: how BasicAuth checks a password (nullptr: bcrypt; tests pass one they can hold).
  HttpServer(const std::string& host, uint16_t port, HttpLimits limits = {}, const WebConfig& web = {},
             BasicAuth::Verify verify = nullptr);
  /// Serves on `listen_fd`, a listening socket (socket activation); takes it over.
  HttpServer(int listen_fd, HttpLimits limits = {}, const WebConfig& web = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  /// The port bound (the one chosen when 0 was asked).
  uint16_t port() const { return port_; }
  /// The address bound, as text without brackets ("127.0.0.1", "::1").
  const std::string& host() const { return host_; }
  bool tls() const { return tls_ != nullptr; }

  /// Returns the answer, or nullopt to be asked again later (the answer is not ready yet: the
  /// server asks again when `wake_fd` becomes readable, and at least every 50 ms).
  using Handler = std::function<std::optional<HttpResponse>(const HttpRequest&)>;
  /// Serves until *stop is set (a signal handler's flag).  `wake_fd` (-1: none): a descriptor the
  /// server drains and then asks the waiting requests again.
  void serve(const Handler& handler, const volatile sig_atomic_t* stop, int wake_fd = -1);

 private:
  struct Loop;  // serve's connections and their transitions (http_server.cc)
  void setup(const WebConfig& web, BasicAuth::Verify verify = nullptr);
  int fd_ = -1;
  int reserve_fd_ = -1;  // held for EMFILE: closed to accept and refuse one connection
  uint16_t port_ = 0;
  std::string host_;
  HttpLimits limits_;
  std::unique_ptr<TlsContext> tls_;
  std::unique_ptr<BasicAuth> auth_;
};

}  // namespace gpumap
