#include "http/client.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "http/tls.h"

namespace gpumap {

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

class SocketTransport : public HttpTransport {
 public:
  SocketTransport(HttpAuth auth, std::shared_ptr<Resolver> resolver) : auth_(std::move(auth)), resolver_(std::move(resolver)) {}
  bool concurrent() const override { return true; }  // no state between calls: a connection and an SSL_CTX each

  HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) override {
    return read_whole(*this, url, target, timeout_s);
  }

  void get_streamed(const HttpUrl& url, const std::string& target, double timeout_s, const AnswerConsumer& consume) override {
    send(url, "GET", target, nullptr, timeout_s, consume);
  }

  HttpAnswer post_form(const HttpUrl& url, const std::string& target, const std::string& form, double timeout_s) override {
    HttpAnswer whole;
    post_form_streamed(url, target, form, timeout_s, [&](const HttpAnswer& head, BodySource& body) {
      whole = head;
      char buf[65536];
      while (size_t n = body.read(buf, sizeof buf)) whole.body.append(buf, n);
    });
    return whole;
  }

  void post_form_streamed(const HttpUrl& url, const std::string& target, const std::string& form, double timeout_s,
                          const AnswerConsumer& consume) override {
    send(url, "POST", target, &form, timeout_s, consume);
  }

 private:
  void send(const HttpUrl& url, const char* method, const std::string& target, const std::string* form, double timeout_s,
            const AnswerConsumer& consume) {
    // One deadline for the whole request: looking the name up, connecting, TLS, sending, and every
    // read of the answer, also while its bytes keep coming (issue 56 item 2).
    Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(std::max(0.001, timeout_s) * 1000));
    Fd fd;
    connect_to(url, deadline, fd);
    std::unique_ptr<SSL, SslFree> ssl;
    if (url.scheme == "https") ssl = handshake(url, fd.get(), deadline);
    std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
    bool default_port = (url.scheme == "http" && url.port == 80) || (url.scheme == "https" && url.port == 443);
    std::string req = std::string(method) + " " + url.path_prefix + target + " HTTP/1.1\r\nHost: " + host +
                      (default_port ? "" : ":" + std::to_string(url.port)) +
                      "\r\nUser-Agent: gpumap-fleet\r\nAccept: application/json\r\nConnection: close\r\n";
    if (!auth_.authorization.empty()) req += "Authorization: " + auth_.authorization + "\r\n";
    for (const auto& [name, value] : auth_.headers) req += name + ": " + value + "\r\n";
    if (form)
      req += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + std::to_string(form->size()) + "\r\n";
    req += "\r\n";
    if (req.size() > kHttpMaxRequestHead)  // before any byte is sent: no proxy sees a head it refuses
      throw HttpError(HttpFailure::kProtocol, "the request's head would be " + std::to_string(req.size()) +
                                                  " bytes, over the " + std::to_string(kHttpMaxRequestHead) +
                                                  " a proxy's default buffers take (nginx answers 414 or 400)");
    if (form) req += *form;
    send_all(fd.get(), ssl.get(), req, deadline);
    Source source(fd.get(), ssl.get(), deadline);
    source.read_head();
    consume(source.reader.head(), source);
  }

  /// The answer's body as the connection brings it, de-chunked by the AnswerReader as it arrives.
  struct Source : BodySource {
    Source(int f, SSL* s, Clock::time_point until) : fd(f), ssl(s), deadline(until) {}
    int fd;
    SSL* ssl;
    Clock::time_point deadline;
    AnswerReader reader;
    std::string pending;  // body bytes read, not yet taken
    size_t taken = 0;
    bool ended = false;
    // One read from the connection into the reader; false when the answer is complete.
    bool more() {
      if (reader.done()) return false;
      char buf[65536];
      long n = read_some(fd, ssl, buf, sizeof buf, deadline);
      if (n == 0) return !reader.finish();
      return !reader.feed(buf, static_cast<size_t>(n), pending);
    }
    void read_head() {
      while (!reader.head_done() && more()) {
      }
    }
    size_t read(char* out, size_t n) override {
      while (taken == pending.size()) {
        pending.clear();
        taken = 0;
        if (!more() && pending.empty()) return 0;
      }
      size_t k = std::min(n, pending.size() - taken);
      std::memcpy(out, pending.data() + taken, k);
      taken += k;
      return k;
    }
  };

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

  std::unique_ptr<SSL, SslFree> handshake(const HttpUrl& url, int fd, Clock::time_point deadline) {
    std::unique_ptr<SSL, SslFree> ssl = client_tls(auth_, url.host, fd);
    for (;;) {
      ERR_clear_error();
      int rc = SSL_connect(ssl.get());
      if (rc == 1) return ssl;
      int e = SSL_get_error(ssl.get(), rc);
      if (e == SSL_ERROR_WANT_READ) wait_for(fd, POLLIN, deadline, "TLS handshake");
      else if (e == SSL_ERROR_WANT_WRITE) wait_for(fd, POLLOUT, deadline, "TLS handshake");
      else {
        long v = SSL_get_verify_result(ssl.get());
        std::string why = v != X509_V_OK ? std::string("certificate: ") + X509_verify_cert_error_string(v) : tls_errors();
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
        else throw HttpError(HttpFailure::kTls, "TLS write: " + tls_errors());
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

  /// Bytes read into `buf`; 0 at the end of the connection.  HttpError(kTimeout) past the
  /// deadline, whether or not bytes keep coming.
  static long read_some(int fd, SSL* ssl, char* buf, size_t size, Clock::time_point deadline) {
    for (;;) {
      if (Clock::now() >= deadline)
        throw HttpError(HttpFailure::kTimeout, "the answer did not end in time (reading the answer)");
      if (ssl) {
        ERR_clear_error();
        int n = SSL_read(ssl, buf, static_cast<int>(size));
        if (n > 0) return n;
        int e = SSL_get_error(ssl, n);
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        if (e == SSL_ERROR_WANT_READ) wait_for(fd, POLLIN, deadline, "reading the answer");
        else if (e == SSL_ERROR_WANT_WRITE) wait_for(fd, POLLOUT, deadline, "reading the answer");
        else if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;  // closed without close_notify
        else throw HttpError(HttpFailure::kTls, "TLS read: " + tls_errors());
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

HttpAnswer read_whole(HttpTransport& http, const HttpUrl& url, const std::string& target, double timeout_s) {
  HttpAnswer whole;
  http.get_streamed(url, target, timeout_s, [&](const HttpAnswer& head, BodySource& body) {
    whole = head;
    char buf[65536];
    while (size_t n = body.read(buf, sizeof buf)) whole.body.append(buf, n);
  });
  return whole;
}

void HttpTransport::get_streamed(const HttpUrl& url, const std::string& target, double timeout_s,
                                 const AnswerConsumer& consume) {
  HttpAnswer a = get(url, target, timeout_s);
  StringSource body(a.body);
  consume(a, body);
}

HttpAnswer HttpTransport::post_form(const HttpUrl&, const std::string&, const std::string&, double) {
  return {405, "Method Not Allowed", {{"allow", "GET"}}, ""};
}

void HttpTransport::post_form_streamed(const HttpUrl& url, const std::string& target, const std::string& form, double timeout_s,
                                       const AnswerConsumer& consume) {
  HttpAnswer a = post_form(url, target, form, timeout_s);
  StringSource body(a.body);
  consume(a, body);
}

std::unique_ptr<HttpTransport> socket_transport(const HttpAuth& auth, std::shared_ptr<Resolver> resolver) {
  return std::make_unique<SocketTransport>(auth, resolver ? std::move(resolver) : system_resolver());
}

}  // namespace gpumap

