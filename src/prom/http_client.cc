#include "prom/http_client.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "os/ca_paths.h"

namespace gpumap {

std::string HttpUrl::shown() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port) + path_prefix;
}

std::optional<HttpUrl> parse_http_url(const std::string& text, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<HttpUrl> {
    if (why) *why = w;
    return std::nullopt;
  };
  HttpUrl u;
  std::string rest;
  if (text.rfind("http://", 0) == 0) {
    u.scheme = "http";
    u.port = 80;
    rest = text.substr(7);
  } else if (text.rfind("https://", 0) == 0) {
    u.scheme = "https";
    u.port = 443;
    rest = text.substr(8);
  } else {
    return fail("it does not start with http:// or https://");
  }
  size_t slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string::npos)
    return fail("it has a user and password in it (they would show in `ps`); put them in --http.config.file");
  if (path.find_first_of("?#") != std::string::npos) return fail("it has a query or fragment; give the server's base URL");
  for (char c : text)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return fail("it has a space or a control character");
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return fail("its IPv6 address has no closing `]`");
    u.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return fail("junk after its IPv6 address");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
    if (u.host.find(':') != std::string::npos) return fail("an IPv6 address needs brackets: http://[::1]:9090");
  }
  if (u.host.empty()) return fail("it names no host");
  if (authority.find(':') != std::string::npos && authority.back() == ':') return fail("its port is empty");
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail("its port `" + port + "` is not a number");
    u.port = std::stoi(port);
    if (u.port < 1 || u.port > 65535) return fail("its port " + port + " is not between 1 and 65535");
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  u.path_prefix = path;
  return u;
}

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

[[noreturn]] void protocol(const std::string& what) { throw HttpError(HttpFailure::kProtocol, what); }

/// The chunked body starting at `pos`: the content when complete, std::nullopt when more is needed.
std::optional<std::string> dechunk(const std::string& raw, size_t pos, bool eof, size_t max_body) {
  std::string body;
  for (;;) {
    size_t eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) {
      if (raw.size() - pos > 1024) protocol("a chunk size line is longer than 1 KiB");
      if (eof) protocol("the connection closed inside a chunked body");
      return std::nullopt;
    }
    std::string line = raw.substr(pos, eol - pos);
    line = line.substr(0, line.find(';'));  // chunk extensions are ignored
    line = trim(line);
    if (line.empty() || line.size() > 15 || !std::all_of(line.begin(), line.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      protocol("a bad chunk size `" + line.substr(0, 32) + "`");
    size_t n = std::stoull(line, nullptr, 16);
    pos = eol + 2;
    if (n == 0) {  // trailers until an empty line
      for (;;) {
        size_t e = raw.find("\r\n", pos);
        if (e == std::string::npos) {
          if (eof) protocol("the connection closed inside a chunked body's trailer");
          return std::nullopt;
        }
        if (e == pos) return body;
        pos = e + 2;
      }
    }
    if (n > max_body || body.size() + n > max_body) protocol("the answer is larger than " + std::to_string(max_body >> 20) + " MiB");
    if (raw.size() < pos + n + 2) {
      if (eof) protocol("the connection closed inside a chunk");
      return std::nullopt;
    }
    if (raw.compare(pos + n, 2, "\r\n") != 0) protocol("a chunk does not end with CRLF");
    body.append(raw, pos, n);
    pos += n + 2;
  }
}

}  // namespace

std::optional<HttpAnswer> parse_http_response(const std::string& raw, bool eof, size_t max_body) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    if (raw.size() > 64 * 1024) protocol("the answer's head is longer than 64 KiB");
    if (eof) protocol(raw.empty() ? "the server closed the connection without answering" : "the connection closed inside the answer's head");
    return std::nullopt;
  }
  HttpAnswer r;
  size_t eol = raw.find("\r\n");
  std::string status_line = raw.substr(0, eol);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12 || status_line[8] != ' ')
    protocol("not an HTTP/1.x answer: `" + status_line.substr(0, 40) + "`");
  std::string code = status_line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) protocol("a bad status code `" + code + "`");
  r.status = std::stoi(code);
  r.reason = status_line.size() > 13 ? status_line.substr(13) : "";
  size_t pos = eol + 2;
  while (pos < head_end) {
    size_t e = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, e - pos);
    pos = e + 2;
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) protocol("a header line without a name: `" + line.substr(0, 40) + "`");
    r.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  }
  size_t body_start = head_end + 4;
  bool no_body = r.status / 100 == 1 || r.status == 204 || r.status == 304;
  auto te = r.headers.find("transfer-encoding");
  auto cl = r.headers.find("content-length");
  if (no_body) return r;
  if (te != r.headers.end() && lower(te->second) != "identity") {
    if (lower(te->second) != "chunked") protocol("an unsupported Transfer-Encoding `" + te->second + "`");
    std::optional<std::string> b = dechunk(raw, body_start, eof, max_body);
    if (!b) return std::nullopt;
    r.body = std::move(*b);
    return r;
  }
  if (cl != r.headers.end()) {
    const std::string& v = cl->second;
    if (v.empty() || v.size() > 15 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      protocol("a bad Content-Length `" + v.substr(0, 32) + "`");
    size_t n = std::stoull(v);
    if (n > max_body) protocol("the answer is larger than " + std::to_string(max_body >> 20) + " MiB");
    if (raw.size() - body_start < n) {
      if (eof) protocol("the connection closed after " + std::to_string(raw.size() - body_start) + " of " + v + " bytes");
      return std::nullopt;
    }
    r.body = raw.substr(body_start, n);
    return r;
  }
  if (raw.size() - body_start > max_body) protocol("the answer is larger than " + std::to_string(max_body >> 20) + " MiB");
  if (!eof) return std::nullopt;
  r.body = raw.substr(body_start);
  return r;
}

namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

/// Milliseconds left before `deadline` (at least 0).
int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

/// Waits for `events` on `fd`; HttpError(kTimeout) past the deadline.
void wait_for(int fd, short events, Clock::time_point deadline, const std::string& doing) {
  for (;;) {
    pollfd p{fd, events, 0};
    int ms = ms_left(deadline);
    if (ms == 0) throw HttpError(HttpFailure::kTimeout, "no answer in time (" + doing + ")");
    int n = ::poll(&p, 1, ms);
    if (n > 0) return;
    if (n < 0 && errno != EINTR) throw HttpError(HttpFailure::kUnreachable, std::string("poll: ") + std::strerror(errno));
  }
}

std::string openssl_error() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown TLS error" : out;
}

struct SslCtxDeleter {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslDeleter {
  void operator()(SSL* s) const { SSL_free(s); }
};

class SocketTransport : public HttpTransport {
 public:
  SocketTransport(HttpAuth auth, std::shared_ptr<Resolver> resolver) : auth_(std::move(auth)), resolver_(std::move(resolver)) {}
  bool concurrent() const override { return true; }  // no state between calls: a connection and an SSL_CTX each

  HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) override {
    Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(std::max(0.001, timeout_s) * 1000));
    Fd fd;
    connect_to(url, deadline, fd);
    std::unique_ptr<SSL, SslDeleter> ssl;
    if (url.scheme == "https") ssl = handshake(url, fd.get(), deadline);
    std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
    bool default_port = (url.scheme == "http" && url.port == 80) || (url.scheme == "https" && url.port == 443);
    std::string req = "GET " + url.path_prefix + target + " HTTP/1.1\r\nHost: " + host +
                      (default_port ? "" : ":" + std::to_string(url.port)) +
                      "\r\nUser-Agent: gpumap-fleet\r\nAccept: application/json\r\nConnection: close\r\n";
    if (!auth_.authorization.empty()) req += "Authorization: " + auth_.authorization + "\r\n";
    req += "\r\n";
    send_all(fd.get(), ssl.get(), req, deadline);
    std::string raw;
    bool eof = false;
    for (;;) {
      if (std::optional<HttpAnswer> r = parse_http_response(raw, eof)) return std::move(*r);
      char buf[65536];
      long n = read_some(fd.get(), ssl.get(), buf, sizeof buf, deadline);
      if (n == 0) eof = true;
      else raw.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  void connect_to(const HttpUrl& url, Clock::time_point deadline, Fd& fd) {
    std::vector<ResolvedAddress> addresses = resolve_within(resolver_, url.host, url.port, deadline);
    HttpFailure last_kind = HttpFailure::kUnreachable;
    std::string last = "no address";
    for (const ResolvedAddress& a : addresses) {
      fd.reset(::socket(a.family, a.socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a.protocol));
      if (fd.get() < 0) {
        last = std::string("socket: ") + std::strerror(errno);
        continue;
      }
      int err = 0;
      if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0) {
        if (errno != EINPROGRESS) {
          err = errno;
        } else {
          wait_for(fd.get(), POLLOUT, deadline, "connecting");
          socklen_t len = sizeof err;
          if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        }
      }
      if (err == 0) {
        int one = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return;
      }
      last_kind = err == ECONNREFUSED ? HttpFailure::kRefused : HttpFailure::kUnreachable;
      last = std::string("connect: ") + std::strerror(err);
    }
    throw HttpError(last_kind, last);
  }

  std::unique_ptr<SSL, SslDeleter> handshake(const HttpUrl& url, int fd, Clock::time_point deadline) {
    std::unique_ptr<SSL_CTX, SslCtxDeleter> ctx(SSL_CTX_new(TLS_client_method()));
    if (!ctx) throw HttpError(HttpFailure::kTls, openssl_error());
    SSL_CTX_set_min_proto_version(ctx.get(), auth_.tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
    if (!auth_.insecure_skip_verify) {
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
      int ok = auth_.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx.get())
                                     : SSL_CTX_load_verify_locations(ctx.get(), auth_.ca_file.c_str(), nullptr);
      if (ok != 1) throw HttpError(HttpFailure::kTls, "cannot load the CA file " + auth_.ca_file + ": " + openssl_error());
      if (std::string b = auth_.ca_file.empty() ? fallback_ca_bundle(X509_get_default_cert_file(), X509_get_default_cert_dir()) : "";
          !b.empty() && SSL_CTX_load_verify_locations(ctx.get(), b.c_str(), nullptr) != 1) ERR_clear_error();  // os/ca_paths.h: RHEL's layout
    }
    if (!auth_.cert_file.empty()) {
      if (SSL_CTX_use_certificate_chain_file(ctx.get(), auth_.cert_file.c_str()) != 1)
        throw HttpError(HttpFailure::kTls, "cannot load the client certificate " + auth_.cert_file + ": " + openssl_error());
      if (SSL_CTX_use_PrivateKey_file(ctx.get(), auth_.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
        throw HttpError(HttpFailure::kTls, "cannot load the client key " + auth_.key_file + ": " + openssl_error());
    }
    std::unique_ptr<SSL, SslDeleter> ssl(SSL_new(ctx.get()));  // holds its own reference to ctx
    if (!ssl) throw HttpError(HttpFailure::kTls, openssl_error());
    const std::string& name = auth_.server_name.empty() ? url.host : auth_.server_name;
    bool is_ip = name.find(':') != std::string::npos ||
                 std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    if (!is_ip) SSL_set_tlsext_host_name(ssl.get(), name.c_str());
    if (!auth_.insecure_skip_verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
      int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
      if (ok != 1) throw HttpError(HttpFailure::kTls, "cannot check the certificate against `" + name + "`");
    }
    SSL_set_fd(ssl.get(), fd);
    for (;;) {
      ERR_clear_error();
      int rc = SSL_connect(ssl.get());
      if (rc == 1) return ssl;
      int e = SSL_get_error(ssl.get(), rc);
      if (e == SSL_ERROR_WANT_READ) wait_for(fd, POLLIN, deadline, "TLS handshake");
      else if (e == SSL_ERROR_WANT_WRITE) wait_for(fd, POLLOUT, deadline, "TLS handshake");
      else {
        long v = SSL_get_verify_result(ssl.get());
        std::string why = v != X509_V_OK ? std::string("certificate: ") + X509_verify_cert_error_string(v) : openssl_error();
        throw HttpError(HttpFailure::kTls, "TLS handshake failed: " + why);
      }
    }
  }

  static void send_all(int fd, SSL* ssl, const std::string& data, Clock::time_point deadline) {
    size_t off = 0;
    while (off < data.size()) {
      if (ssl) {
        ERR_clear_error();
        int n = SSL_write(ssl, data.data() + off, static_cast<int>(data.size() - off));
        if (n > 0) {
          off += static_cast<size_t>(n);
          continue;
        }
        int e = SSL_get_error(ssl, n);
        if (e == SSL_ERROR_WANT_READ) wait_for(fd, POLLIN, deadline, "sending the request");
        else if (e == SSL_ERROR_WANT_WRITE) wait_for(fd, POLLOUT, deadline, "sending the request");
        else throw HttpError(HttpFailure::kTls, "TLS write: " + openssl_error());
      } else {
        ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n > 0) {
          off += static_cast<size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          wait_for(fd, POLLOUT, deadline, "sending the request");
        } else {
          throw HttpError(HttpFailure::kUnreachable, std::string("send: ") + std::strerror(errno));
        }
      }
    }
  }

  /// Bytes read into `buf`; 0 at the end of the connection.
  static long read_some(int fd, SSL* ssl, char* buf, size_t size, Clock::time_point deadline) {
    for (;;) {
      if (ssl) {
        ERR_clear_error();
        int n = SSL_read(ssl, buf, static_cast<int>(size));
        if (n > 0) return n;
        int e = SSL_get_error(ssl, n);
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        if (e == SSL_ERROR_WANT_READ) wait_for(fd, POLLIN, deadline, "reading the answer");
        else if (e == SSL_ERROR_WANT_WRITE) wait_for(fd, POLLOUT, deadline, "reading the answer");
        else if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;  // closed without close_notify
        else throw HttpError(HttpFailure::kTls, "TLS read: " + openssl_error());
      } else {
        ssize_t n = ::recv(fd, buf, size, 0);
        if (n >= 0) return n;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) wait_for(fd, POLLIN, deadline, "reading the answer");
        else if (errno == ECONNRESET) return 0;
        else throw HttpError(HttpFailure::kUnreachable, std::string("recv: ") + std::strerror(errno));
      }
    }
  }

  HttpAuth auth_;
  std::shared_ptr<Resolver> resolver_;
};

}  // namespace

std::unique_ptr<HttpTransport> socket_transport(const HttpAuth& auth, std::shared_ptr<Resolver> resolver) {
  return std::make_unique<SocketTransport>(auth, resolver ? std::move(resolver) : system_resolver());
}

}  // namespace gpumap
