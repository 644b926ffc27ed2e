#include "http/client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(HttpUrl, ParsesWhatPrometheusUsersWrite) {
  std::string why;
  std::optional<HttpUrl> u = parse_http_url("http://prometheus:9090", &why);
  ASSERT_TRUE(u) << why;
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "prometheus");
  EXPECT_EQ(u->port, 9090);
  EXPECT_EQ(u->path_prefix, "");
  u = parse_http_url("https://mon.example.org/prometheus/", &why);
  ASSERT_TRUE(u) << why;
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path_prefix, "/prometheus");
  EXPECT_EQ(u->shown(), "https://mon.example.org:443/prometheus");
  u = parse_http_url("http://[::1]:9090", &why);
  ASSERT_TRUE(u) << why;
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->shown(), "http://[::1]:9090");
}

TEST(HttpUrl, RefusesWithTheReason) {
  auto why = [](const std::string& text) {
    std::string w;
    EXPECT_FALSE(parse_http_url(text, &w)) << text;
    return w;
  };
  EXPECT_NE(why("prometheus:9090").find("http:// or https://"), std::string::npos);
  EXPECT_NE(why("http://admin:secret@prometheus:9090").find("--http.config.file"), std::string::npos);
  EXPECT_NE(why("http://prometheus:99999").find("between 1 and 65535"), std::string::npos);
  EXPECT_NE(why("http://prometheus:abc").find("not a number"), std::string::npos);
  EXPECT_NE(why("http://:9090").find("no host"), std::string::npos);
  EXPECT_NE(why("http://p:9090/api?x=1").find("query"), std::string::npos);
  EXPECT_NE(why("http://p q:9090").find("space"), std::string::npos);
}

TEST(HttpUrl, EncodesQueryValues) {
  EXPECT_EQ(url_encode("up{job=~\"a b\"} + 1"), "up%7Bjob%3D~%22a%20b%22%7D%20%2B%201");
  EXPECT_EQ(url_encode("a&b#c"), "a%26b%23c");
}

TEST(HttpAnswer, ContentLengthAndMoreBytesNeeded) {
  std::string raw = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhel";
  EXPECT_FALSE(parse_http_response(raw, false));
  std::optional<HttpAnswer> r = parse_http_response(raw + "lo", false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->reason, "OK");
  EXPECT_EQ(r->headers.at("content-type"), "application/json");
  EXPECT_EQ(r->body, "hello");
  EXPECT_THROW(parse_http_response(raw, true), HttpError);  // cut short by the end of the connection
}

TEST(HttpAnswer, Chunked) {
  std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n";
  EXPECT_FALSE(parse_http_response(raw, false));  // the last chunk's trailer not ended yet
  std::optional<HttpAnswer> r = parse_http_response(raw + "X-Trailer: 1\r\n\r\n", false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "Wikipedia in\r\n\r\nchunks.");
  EXPECT_THROW(parse_http_response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false), HttpError);
  EXPECT_THROW(parse_http_response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWi", true), HttpError);
}

TEST(HttpAnswer, UntilTheConnectionEndsAndLimits) {
  std::string raw = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n\r\n404 page not found\n";
  EXPECT_FALSE(parse_http_response(raw, false));
  std::optional<HttpAnswer> r = parse_http_response(raw, true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, "404 page not found\n");
  EXPECT_THROW(parse_http_response("SSH-2.0-OpenSSH_9.2\r\n\r\n", false), HttpError);
  EXPECT_THROW(parse_http_response("", true), HttpError);
  EXPECT_THROW(parse_http_response("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", false, 10), HttpError);
  EXPECT_THROW(parse_http_response("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false), HttpError);
}

/// A listening socket on 127.0.0.1 and its port.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd, 8), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
  HttpUrl url() const { return *parse_http_url("http://127.0.0.1:" + std::to_string(port), nullptr); }
};

/// Accepts one connection, reads the request head into `request`, writes `parts` one by one, closes.
std::thread serve_once(const Listener& l, std::string* request, std::vector<std::string> parts) {
  return std::thread([&l, request, parts] {
    int c = ::accept(l.fd, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    while (request->find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      request->append(buf, static_cast<size_t>(n));
    }
    for (const std::string& p : parts) (void)!::write(c, p.data(), p.size());
    ::close(c);
  });
}

TEST(SocketTransport, GetsAChunkedAnswerSentInPieces) {
  Listener l;
  std::string request;
  std::thread t = serve_once(l, &request, {"HTTP/1.1 200 OK\r\nTransfer-", "Encoding: chunked\r\n\r\n3\r\n{\"a", "\r\n2\r\n\":\r\n1\r\n1\r\n1\r\n}\r\n0\r\n\r\n"});
  HttpAuth auth;
  auth.authorization = "Bearer tok";
  HttpAnswer r = socket_transport(auth)->get(l.url(), "/api/v1/query?query=up", 10);
  t.join();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"a\":1}");
  EXPECT_EQ(request.rfind("GET /api/v1/query?query=up HTTP/1.1\r\n", 0), 0u) << request;
  EXPECT_NE(request.find("\r\nHost: 127.0.0.1:" + std::to_string(l.port) + "\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("\r\nAuthorization: Bearer tok\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("\r\nConnection: close\r\n"), std::string::npos) << request;
}

TEST(SocketTransport, RefusedAndTimedOutAreToldApart) {
  HttpUrl closed;
  {
    Listener l;
    closed = l.url();
  }  // nothing listens on that port any more
  try {
    socket_transport({})->get(closed, "/", 10);
    FAIL() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpFailure::kRefused) << e.what();
  }
  Listener silent;  // the kernel takes the connection; nobody answers
  try {
    socket_transport({})->get(silent.url(), "/", 0.2);
    FAIL() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpFailure::kTimeout) << e.what();
  }
}

TEST(SocketTransport, AnHttpsUrlOnAPlainServerIsATlsFailure) {
  Listener l;
  std::thread t([&l] {  // answers at once, as a plain server answers a ClientHello it cannot read
    int c = ::accept(l.fd, nullptr, nullptr);
    if (c < 0) return;
    std::string a = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)!::write(c, a.data(), a.size());
    ::close(c);
  });
  HttpUrl u = l.url();
  u.scheme = "https";
  try {
    socket_transport({})->get(u, "/", 5);
    ADD_FAILURE() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpFailure::kTls) << e.what();
  }
  t.join();
}

// Issue 56 item 13: an interim answer (100 Continue, 103 Early Hints) was taken as the answer
// (status 100, no body); it is skipped, and the answer after it is read.
TEST(HttpAnswer, AnInterimAnswerIsNotTheAnswer) {
  std::optional<HttpAnswer> r = parse_http_response(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");
  EXPECT_FALSE(parse_http_response("HTTP/1.1 100 Continue\r\n\r\n", false));  // the answer is still to come
  EXPECT_THROW(parse_http_response("HTTP/1.1 100 Continue\r\n\r\n", true), HttpError);
  EXPECT_THROW(parse_http_response("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", false), HttpError);
}

// Issue 56 item 2: what an answer may spend on framing is bounded, not only its content: endless
// trailer lines, and 1-byte chunks with 1 000-byte extensions, were read for as long as they came.
TEST(HttpAnswer, TrailersAndChunkFramingAreBounded) {
  std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string trailers = head + "2\r\nok\r\n0\r\n";
  while (trailers.size() < 2 * kHttpMaxHead) trailers += "X-Trailer: " + std::string(100, 'a') + "\r\n";
  EXPECT_THROW(parse_http_response(trailers, false), HttpError);
  std::string framed = head;
  for (int i = 0; i < 200; ++i) framed += "1;" + std::string(1000, 'e') + "\r\nx\r\n";  // 200 KB for 200 bytes
  EXPECT_THROW(parse_http_response(framed, false, 4096), HttpError);
  // Within the limits the same framing is an answer.
  std::optional<HttpAnswer> r = parse_http_response(head + "1;ext=1\r\nx\r\n0\r\nX-T: 1\r\n\r\n", false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "x");
}

// The body is de-chunked as the bytes arrive, whatever their cuts: byte by byte gives the same
// body, and each byte is looked at once (the answer is never re-assembled from its start).
TEST(HttpAnswer, DechunksAsTheBytesArrive) {
  std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\n";
  AnswerReader reader;
  std::string body;
  bool done = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    ASSERT_FALSE(done) << "complete before its end, at byte " << i;
    done = reader.feed(raw.data() + i, 1, body);
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(body, "Wikipedia in\r\n\r\nchunks.");
  EXPECT_EQ(reader.head().status, 200);
}

/// A server that answers its one connection with a chunked body that never ends (a byte every
/// 10 ms), until `stop` is set or `limit_s` passes.
std::thread stream_forever(const Listener& l, std::atomic<bool>* stop, double limit_s) {
  return std::thread([&l, stop, limit_s] {
    int c = ::accept(l.fd, nullptr, nullptr);
    if (c < 0) return;
    std::string h = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    (void)!::write(c, h.data(), h.size());
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    while (!*stop && std::chrono::steady_clock::now() < end) {
      if (::write(c, "1\r\n[\r\n", 6) != 6) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::close(c);
  });
}

// Issue 56 item 2: the timeout bounds the whole answer, not only each wait: an answer that keeps
// coming ran until the server stopped (here: 8 s) at a timeout of 0.5 s.
TEST(SocketTransport, TheTimeoutEndsAnAnswerThatKeepsComing) {
  Listener l;
  std::atomic<bool> stop{false};
  std::thread t = stream_forever(l, &stop, 8);
  auto start = std::chrono::steady_clock::now();
  try {
    socket_transport({})->get(l.url(), "/api/v1/query?query=up", 0.5);
    ADD_FAILURE() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpFailure::kTimeout) << e.what();
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  t.join();
  EXPECT_LT(took, 3.0) << "the answer was read for " << took << " s at a timeout of 0.5 s";
}

// The body streamed to its reader as it arrives: the reader sees it before the answer ends, and
// what the reader throws comes out (the connection closed).
TEST(SocketTransport, StreamsTheBodyToItsReader) {
  Listener l;
  std::atomic<bool> stop{false};
  std::thread t = stream_forever(l, &stop, 8);
  struct Enough {};
  size_t seen = 0;
  EXPECT_THROW(socket_transport({})->get_streamed(l.url(), "/", 5,
                                                  [&](const HttpAnswer& head, BodySource& body) {
                                                    EXPECT_EQ(head.status, 200);
                                                    char buf[16];
                                                    while (size_t n = body.read(buf, sizeof buf)) {
                                                      seen += n;
                                                      if (seen >= 3) throw Enough{};
                                                    }
                                                  }),
               Enough);
  stop = true;
  t.join();
  EXPECT_GE(seen, 3u);
}

// Issue 56 item 13 over a connection: the answer after 100 Continue is the one read.
TEST(SocketTransport, SkipsAnInterimAnswer) {
  Listener l;
  std::string request;
  std::thread t = serve_once(l, &request, {"HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}"});
  HttpAnswer r = socket_transport({})->get(l.url(), "/", 10);
  t.join();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"a\":1}");
}

}  // namespace
}  // namespace gpumap
