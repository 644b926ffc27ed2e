// HTTP/1.x messages, the one place they are written and read: the request heads `gpumap serve`
// takes (http/server.h) and the answers it writes, and the answers the Prometheus client reads
// (http/client.h).  Pure functions over bytes, for tests and fuzzing.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpumap {

// ---- The server's side: a request's head in, an answer out.

struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // without the query string
  std::chrono::steady_clock::time_point arrived;  // when its head was complete
  std::optional<double> scrape_timeout_s;  // X-Prometheus-Scrape-Timeout-Seconds, when given and > 0
  bool accept_gzip = false;                // Accept-Encoding names gzip (or *) with q > 0
};

/// Bytes of a body that many answers share (one /metrics frame's series, issue 56 item 11): made
/// once, never changed, held by reference by each answer that carries them, so N readers of one
/// frame hold one copy of it, not N.  Its gzip form, a raw deflate piece ended by a sync flush
/// (byte-aligned and not the last block, so it goes between any answer's own pieces of one gzip
/// stream), is made the first time an answer asks for it and shared the same way.
class SharedBody {
 public:
  explicit SharedBody(std::string text) : text_(std::move(text)) {}
  SharedBody(const SharedBody&) = delete;
  SharedBody& operator=(const SharedBody&) = delete;
  const std::string& text() const { return text_; }
  /// text() as raw deflate (made on the first call, from any thread).
  const std::string& deflated() const;
  /// text()'s CRC-32 (gzip's), made with deflated().
  uint32_t crc() const;
  /// The bytes it holds: the text, and its deflate once made.
  size_t bytes() const { return text_.capacity() + deflated_bytes_.load(); }

 private:
  std::string text_;
  mutable std::once_flag once_;
  mutable std::string deflated_;
  mutable uint32_t crc_ = 0;
  mutable std::atomic<size_t> deflated_bytes_{0};
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;  // the body; with `shared`, its part before the shared one
  std::vector<std::pair<std::string, std::string>> headers;  // more header lines
  /// A part of the body held, not copied (null: none): the body is `body`, shared->text(), `tail`.
  std::shared_ptr<const SharedBody> shared;
  std::string tail;
  /// The whole body, in one string (tests, small answers).
  std::string full_body() const;
};

/// A piece of an answer's bytes as written: `size` bytes at `data`, kept alive by `owner` (the
/// answer's own bytes, or a SharedBody other answers hold too).  Never empty.
struct WirePiece {
  std::shared_ptr<const void> owner;
  const char* data = nullptr;
  size_t size = 0;
};

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
/// The reason phrase of the statuses the server writes ("Error" for others).
const char* http_reason(int status);
/// A plain-text answer of `status` with `body`.
HttpResponse plain_response(int status, const std::string& body);
/// `r` as the bytes sent: status line, headers (Content-Length, Connection: close), then the body
/// unless `head_only`; gzip-compressed when `gzip` and the answer is a 200 with a body.
std::string format_response(const HttpResponse& r, bool head_only, bool gzip);
/// The same bytes as pieces: the head with the answer's own bytes, and `r.shared` (or its
/// deflate) by reference, never copied.  gzip: one gzip member whose deflate stream is the own
/// parts and the shared part deflated each on its own, joined by sync flushes (as pigz joins
/// blocks), with the CRC-32 of the whole (crc32_combine).
std::vector<WirePiece> response_pieces(const HttpResponse& r, bool head_only, bool gzip);

// ---- The client's side: an answer's bytes in.

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

/// The longest head (status line and headers, interim answers' too) and trailer section taken.
constexpr size_t kHttpMaxHead = size_t{64} << 10;

/// An HTTP/1.x answer read as its bytes arrive, each byte looked at once: the head, then the body,
/// de-chunked as it comes (never re-assembled from its start), then the trailers.  Bounded:
/// the body by `max_body`, the head and the trailers by kHttpMaxHead each, a chunk's size line by
/// 1 KiB, all the framing (head, chunk lines, trailers) by kHttpMaxHead + max_body / 4, so 1-byte
/// chunks with 1 000-byte extensions end at that limit.  Interim answers (1xx: 100 Continue, 103
/// Early Hints) are skipped: the answer is the one after them (101, a protocol switch, is refused).
class AnswerReader {
 public:
  explicit AnswerReader(size_t max_body = kHttpMaxBody);
  /// Takes `n` more bytes; the body's among them are appended to `body`.  true once the answer is
  /// complete (bytes after it are not looked at).  HttpError(kProtocol) when malformed or too large.
  bool feed(const char* p, size_t n, std::string& body);
  /// The connection ended: true when that ends the answer (a body until the connection's end);
  /// HttpError(kProtocol) when it was cut short.
  bool finish();
  /// Whether the head is in, and the head (status, reason, headers; body empty).
  bool head_done() const { return head_done_; }
  const HttpAnswer& head() const { return head_; }
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };
  void on_head();
  void on_line(const std::string& line);
  size_t max_framing() const;
  size_t max_body_;
  State state_ = State::kHead;
  HttpAnswer head_;
  bool head_done_ = false, sized_ = false;
  std::string line_;  // the line (or head) being read
  size_t remaining_ = 0, body_bytes_ = 0, framing_ = 0, trailer_bytes_ = 0, interim_ = 0;
};

/// An answer's body as it arrives (de-chunked), pulled by whoever reads it: memory is what the
/// reader keeps, not the answer's size.
class BodySource {
 public:
  virtual ~BodySource() = default;
  /// Up to `n` bytes into `out`; 0 at the body's end.  HttpError when the connection fails, the
  /// request's deadline passes (also while bytes keep coming) or the answer is malformed.
  virtual size_t read(char* out, size_t n) = 0;
};

/// A body held in memory (a test's answer, or one read whole).
class StringSource : public BodySource {
 public:
  explicit StringSource(const std::string& text) : text_(text) {}
  size_t read(char* out, size_t n) override;

 private:
  const std::string& text_;
  size_t at_ = 0;
};

/// Parses a whole HTTP/1.x answer from `raw`, the bytes read so far; `eof`: the server closed the
/// connection after them.  std::nullopt while more bytes are needed; HttpError(kProtocol) for an
/// answer that is malformed, larger than `max_body`, or cut short by the end of the connection.
/// An answer without Content-Length or chunked coding ends with the connection.
std::optional<HttpAnswer> parse_http_response(const std::string& raw, bool eof, size_t max_body = kHttpMaxBody);

}  // namespace gpumap
