// A small HTTP/1.x server for `gpumap serve`: plain POSIX sockets and poll(2), one thread, no
// third-party library.  It answers GET and HEAD on the paths its handler knows and nothing else:
// no file is read and nothing is run on a request's behalf.  Every connection is bounded: the
// request head in size and in time (a slow or silent client is cut off), the number of clients
// at once, and the time to take the answer.  Each answer closes its connection.
#pragma once
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // without the query string
  std::chrono::steady_clock::time_point arrived;  // when its head was complete
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpLimits {
  size_t max_request_bytes = 8192;  // the request line and headers
  double request_timeout_s = 5;     // to send them, from the connection's start
  double write_timeout_s = 10;      // to take the answer
  size_t max_clients = 64;          // connections open at once; more are closed at once
};

/// "HOST:PORT" (IPv4 dotted quad, `localhost`, or `[IPv6]`; PORT 0-65535, 0: any free port) ->
/// the host and the port; Error(kExitUsage) naming `text` otherwise.
std::pair<std::string, uint16_t> parse_listen_address(const std::string& text);
/// Whether `host` (as parse_listen_address gives it) is a loopback address.
bool is_loopback_host(const std::string& host);

/// The head of a request as received: the method and path, or an HTTP status to refuse it with
/// (400 malformed, 405 a method other than GET/HEAD, 505 not HTTP/1.x).  Pure, for tests.
struct ParsedHead {
  int refuse = 0;
  std::string method, path;
};
ParsedHead parse_request_head(const std::string& head);

class HttpServer {
 public:
  /// Binds and listens; Error(kExitError) naming the address (in use, not permitted, ...).
  HttpServer(const std::string& host, uint16_t port, HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  /// The port bound (the one chosen when 0 was asked).
  uint16_t port() const { return port_; }

  /// Returns the answer, or nullopt to be asked again later (the answer is not ready yet: the
  /// server asks again when `wake_fd` becomes readable, and at least every 50 ms).
  using Handler = std::function<std::optional<HttpResponse>(const HttpRequest&)>;
  /// Serves until *stop is set (a signal handler's flag).  `wake_fd` (-1: none): a descriptor the
  /// server drains and then asks the waiting requests again.
  void serve(const Handler& handler, const volatile sig_atomic_t* stop, int wake_fd = -1);

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  HttpLimits limits_;
};

}  // namespace gpumap
