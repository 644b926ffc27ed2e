// A small blocking HTTP/1.1 client (the Prometheus client's, prom/query_api.h): GET, and POST of
// a form (application/x-www-form-urlencoded: a query of any size in the body, never in the
// request's head, which is at most kHttpMaxRequestHead: nginx's default buffers), a body
// by Content-Length, chunked transfer coding or the connection's end, read as it arrives (http/
// message.h's AnswerReader), one deadline per request for all of it,
// http and https (OpenSSL, http/tls.h).  The transport is a seam (HttpTransport) so the fleet
// view's tests answer from memory; the parsing of an answer is a pure function (http/message.h).
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http/message.h"
#include "http/resolver.h"
#include "http/url.h"

namespace gpumap {

/// TLS and authentication settings for requests (promtool's --http.config.file, prom/http_config.h).
struct HttpAuth {
  std::string authorization;  // the Authorization header's value ("Basic …", "Bearer …"); "" for none
  std::string ca_file;        // PEM CA bundle for the server's certificate; "" for the system's
  std::string cert_file, key_file;  // client certificate (mTLS); "" for none
  std::string server_name;    // the name checked in the certificate and sent as SNI; "" for the URL's host
  bool insecure_skip_verify = false;
  bool tls13_only = false;     // tls_config.min_version: TLS13
  /// More request headers (http_headers: a tenant's X-Scope-OrgID), in order; a name with
  /// several values is several lines.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// The most a request's head (request line and headers) may take: 8 KiB, nginx's default
/// large_client_header_buffers; a request whose head would pass it is not sent (HttpError
/// kProtocol), so a proxy never answers 414 or 400 for gpumap's request.
constexpr size_t kHttpMaxRequestHead = 8192;

/// Reads one answer: its head (status, reason, headers; body empty) and its body as a source.
using AnswerConsumer = std::function<void(const HttpAnswer& head, BodySource& body)>;

/// The seam: one GET of `target` ("/api/v1/query?query=…") on `url`'s server within `timeout_s`.
/// Throws HttpError when no answer came; any HTTP status is an answer.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  /// The whole answer, its body in memory (at most kHttpMaxBody).
  virtual HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) = 0;
  /// The same GET, its answer handed to `consume` as it arrives, within the one deadline
  /// `timeout_s` (what `consume` throws comes out; the connection is closed).  This default reads
  /// it whole by get() (the tests' transports); the socket transport streams it.
  virtual void get_streamed(const HttpUrl& url, const std::string& target, double timeout_s, const AnswerConsumer& consume);
  /// One POST of `form` (its Content-Type application/x-www-form-urlencoded) to `target`, its
  /// answer whole.  This default answers 405 Method Not Allowed, as a server that takes only GET
  /// (the tests' transports that know GET alone).
  virtual HttpAnswer post_form(const HttpUrl& url, const std::string& target, const std::string& form, double timeout_s);
  /// The same POST, streamed as get_streamed (this default reads post_form() whole).
  virtual void post_form_streamed(const HttpUrl& url, const std::string& target, const std::string& form, double timeout_s,
                                  const AnswerConsumer& consume);
  /// Whether get() may run on several threads at once (each call its own connection).
  virtual bool concurrent() const { return false; }
};

/// `http.get_streamed(...)` read whole into an HttpAnswer.
HttpAnswer read_whole(HttpTransport& http, const HttpUrl& url, const std::string& target, double timeout_s);

/// The real one: a new TCP connection per request (Connection: close), TLS for https.  The host's
/// name is looked up by `resolver` (the system's when null) within the request's deadline
/// (http/resolver.h): a DNS server that never answers is HttpError(kTimeout) naming the host.
std::unique_ptr<HttpTransport> socket_transport(const HttpAuth& auth, std::shared_ptr<Resolver> resolver = nullptr);

}  // namespace gpumap

