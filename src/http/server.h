// A small HTTP/1.x server for `gpumap serve`: POSIX sockets and poll(2), one thread, TLS through
// OpenSSL and basic authentication (bcrypt, libcrypt) as the Prometheus exporter-toolkit's
// web-config.yml says (os/web_config.h; the shared HTTP messages in http/message.h, TLS in http/tls.h,
// the credential checks in http/basic_auth.h, the connection states in http/conn_states.h), gzip (zlib) when the client accepts it.  It answers GET
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
// never spins; a connection never takes the last descriptors (a quarter of RLIMIT_NOFILE, at most 8,
// stay free for the rest of the process).  A request waiting for its answer whose client hung up
// frees its slot.  Each answer closes its connection.  Memory per connection is bounded: an
// answer's shared body (HttpResponse::shared, one frame's series) is held by reference, never
// copied, and connections still writing hold at most 3 of them; socket buffers are 64 KiB to send
// and 16 KiB to receive.
#pragma once
#include <signal.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "http/basic_auth.h"
#include "http/conn_states.h"
#include "http/message.h"
#include "os/web_config.h"

namespace gpumap {

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


/// systemd socket activation (sd_listen_fds(3)): the listening socket passed as descriptor 3 when
/// LISTEN_PID is this process and LISTEN_FDS is 1; nullopt when the variables are absent or name
/// another process.  Error(kExitUsage) when they name this process but pass other than one
/// descriptor, or descriptor 3 is not a listening TCP socket.
std::optional<int> activation_socket(const std::optional<std::string>& listen_pid,
                                     const std::optional<std::string>& listen_fds);

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
  struct Loop;  // serve's connections and their transitions (http/server.cc)
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
