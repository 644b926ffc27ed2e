// A small blocking HTTP/1.1 client for Prometheus's query API: GET only, a body by Content-Length,
// chunked transfer coding or the connection's end, one deadline per request, http and https
// (OpenSSL, which the gpumap binary already links).  The transport is a seam (HttpTransport) so the
// fleet view's tests answer from memory; the parsing of an answer is a pure function.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "prom/resolver.h"

namespace gpumap {

/// `http://host:port/prefix` as given to --prometheus.
struct HttpUrl {
  std::string scheme;       // "http" or "https"
  std::string host;         // a name, an IPv4 address, or an IPv6 address without its brackets
  int port = 0;             // 80 / 443 unless given
  std::string path_prefix;  // "" or "/prometheus" (a Prometheus behind a reverse proxy); no trailing '/'
  /// The URL as it is shown in messages (scheme://host:port/prefix).
  std::string shown() const;
};

/// Parses `text`; std::nullopt with `why` set for anything but http(s)://HOST[:PORT][/PATH] (user
/// information in the URL is refused: a password on the command line is what --http.config.file avoids).
std::optional<HttpUrl> parse_http_url(const std::string& text, std::string* why);

/// Percent-encodes `s` for a query string's value (RFC 3986's unreserved characters kept).
std::string url_encode(const std::string& s);

struct HttpAnswer {
  int status = 0;
  std::string reason;
  std::map<std::string, std::string> headers;  // names in lower case; a repeated header: the last
  std::string body;                            // the content, chunked coding removed
};

/// Why a request got no answer.
enum class HttpFailure {
  kResolve,    // the host name did not resolve
  kRefused,    // connection refused (nothing listens there)
  kUnreachable,  // no route, network down, or another connect error
  kTimeout,    // the deadline passed (looking the name up, connecting, sending or reading)
  kTls,        // the TLS handshake or certificate check failed
  kProtocol,   // the answer is not HTTP/1.x, or is cut short, or too large
};

class HttpError : public std::exception {
 public:
  HttpError(HttpFailure kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  HttpFailure kind() const { return kind_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  HttpFailure kind_;
  std::string message_;
};

/// The longest answer body taken (a whole fleet's process series is tens of MiB).
constexpr size_t kHttpMaxBody = size_t{512} << 20;

/// Parses a whole HTTP/1.x answer from `raw`, the bytes read so far; `eof`: the server closed the
/// connection after them.  std::nullopt while more bytes are needed; HttpError(kProtocol) for an
/// answer that is malformed, larger than `max_body`, or cut short by the end of the connection.
/// An answer without Content-Length or chunked coding ends with the connection.
std::optional<HttpAnswer> parse_http_response(const std::string& raw, bool eof, size_t max_body = kHttpMaxBody);

/// TLS and authentication settings for requests (promtool's --http.config.file, prom/http_config.h).
struct HttpAuth {
  std::string authorization;  // the Authorization header's value ("Basic …", "Bearer …"); "" for none
  std::string ca_file;        // PEM CA bundle for the server's certificate; "" for the system's
  std::string cert_file, key_file;  // client certificate (mTLS); "" for none
  std::string server_name;    // the name checked in the certificate and sent as SNI; "" for the URL's host
  bool insecure_skip_verify = false;
  bool tls13_only = false;     // tls_config.min_version: TLS13
};

/// The seam: one GET of `target` ("/api/v1/query?query=…") on `url`'s server within `timeout_s`.
/// Throws HttpError when no answer came; any HTTP status is an answer.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) = 0;
  /// Whether get() may run on several threads at once (each call its own connection).
  virtual bool concurrent() const { return false; }
};

/// The real one: a new TCP connection per request (Connection: close), TLS for https.  The host's
/// name is looked up by `resolver` (the system's when null) within the request's deadline
/// (prom/resolver.h): a DNS server that never answers is HttpError(kTimeout) naming the host.
std::unique_ptr<HttpTransport> socket_transport(const HttpAuth& auth, std::shared_ptr<Resolver> resolver = nullptr);

}  // namespace gpumap
