// The HTTP server on a loopback port, in process (issue 46): the bcrypt checks of basic
// authentication run off the server's loop, remembered (failures too) and bounded (item 2); clients
// of one address that reconnect (item 1) or never read their answers (item 9) never keep a scraper
// on another address out.  A check the test holds open stands for a slow one, the attackers' state
// is waited for as events, so nothing here is timed: the bounds on the waits only keep a failing
// test from hanging.
#include "http/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "os/web_config.h"

namespace gpumap {
namespace {

const char* kUU = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";  // "U*U" (Openwall's vector)
constexpr auto kGuard = std::chrono::seconds(60);  // a bound on a wait that should end at once

std::string basic(const std::string& user_password) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  const std::string& s = user_password;
  for (size_t i = 0; i < s.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(s[i]) << 16;
    if (i + 1 < s.size()) n |= static_cast<unsigned char>(s[i + 1]) << 8;
    if (i + 2 < s.size()) n |= static_cast<unsigned char>(s[i + 2]);
    out += abc[(n >> 18) & 63];
    out += abc[(n >> 12) & 63];
    out += i + 1 < s.size() ? abc[(n >> 6) & 63] : '=';
    out += i + 2 < s.size() ? abc[n & 63] : '=';
  }
  return "Basic " + out;
}

// Checks of the password "slow" wait here until the test opens it; others are bcrypt's.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  void release() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
  bool wait_entered() {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, kGuard, [&] { return entered > 0; });
  }
};

BasicAuth::Verify gated(std::shared_ptr<Gate> g) {  // (the checking thread may outlive the test: shared)
  return [g](const std::string& password, const std::string& hash) {
    if (password != "slow") return password_matches(password, hash);
    std::unique_lock<std::mutex> lock(g->m);
    ++g->entered;
    g->cv.notify_all();
    g->cv.wait(lock, [&] { return g->open; });
    return false;
  };
}

// Opens the gate when the test ends, also on failure.
struct Opener {
  std::shared_ptr<Gate> g;
  ~Opener() { g->release(); }
};

// A server on 127.0.0.1 that answers every path with 200 (the body: the path, or `big_body` for
// /big), or as `h` answers; served by a thread.
struct Running {
  volatile sig_atomic_t stop_flag = 0;
  HttpServer server;
  std::string big_body;
  HttpServer::Handler handler;
  std::future<void> done;
  Running(const WebConfig& web, BasicAuth::Verify verify, HttpLimits limits = {}, size_t big = 0,
          HttpServer::Handler h = nullptr)
      : server("127.0.0.1", 0, limits, web, std::move(verify)), big_body(big, 'x'), handler(std::move(h)) {
    if (!handler)
      handler = [this](const HttpRequest& r) {
        return std::optional<HttpResponse>(HttpResponse{200, "text/plain", r.path == "/big" ? big_body : r.path, {}});
      };
    done = std::async(std::launch::async, [this] { server.serve(handler, &stop_flag); });
  }
  // Sets the flag a SIGTERM sets; whether serve returned (within the guard).
  bool stop() {
    stop_flag = 1;
    return done.wait_for(kGuard) == std::future_status::ready;
  }
  ~Running() {
    stop_flag = 1;
    done.wait();
  }
};

// A TCP socket to `port` on 127.0.0.1 from the loopback address `from` (127.0.0.1, 127.0.0.2, ...:
// each is an address of its own to the server); `rcvbuf` > 0: that small a receive window.
// Blocking unless `nonblocking` (then the connection may still be under way).
int connect_from(const char* from, uint16_t port, int rcvbuf = 0, bool nonblocking = false) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in src = {};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src), 0) << from;
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  if (nonblocking) EXPECT_TRUE(rc == 0 || errno == EINPROGRESS) << std::strerror(errno);
  else EXPECT_EQ(rc, 0) << std::strerror(errno);
  return fd;
}

int connect_to(uint16_t port) { return connect_from("127.0.0.1", port); }

void send_request(int fd, const std::string& path, const std::string& authorization) {
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n";
  if (!authorization.empty()) req += "Authorization: " + authorization + "\r\n";
  req += "\r\n";
  EXPECT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
}

// The status of the answer on `fd` (read to the server's close); 0 when none came within the guard.
int status_of(int fd) {
  std::string in;
  auto until = std::chrono::steady_clock::now() + kGuard;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    pollfd p = {fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return 0;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  return in.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(in.c_str() + 9) : -1;
}

int get(uint16_t port, const std::string& path, const std::string& authorization) {
  int fd = connect_to(port);
  send_request(fd, path, authorization);
  int status = status_of(fd);
  close(fd);
  return status;
}

// While a credential check is under way, /healthz without credentials, a login already checked and
// SIGTERM are all answered: the check holds only its own request (it held the server's one thread:
// 40 bogus logins pushed /healthz past a liveness probe's timeout).
TEST(HttpServerAuth, ACheckUnderWayHoldsOnlyItsOwnRequest) {
  auto gate = std::make_shared<Gate>();
  WebConfig web;
  web.basic_auth_users = {{"alice", kUU}};
  Running s(web, gated(gate));
  Opener opener{gate};  // (after the server: opened before serve is waited for)
  EXPECT_EQ(get(s.server.port(), "/metrics", basic("alice:U*U")), 200);  // checked once, remembered
  int slow = connect_to(s.server.port());
  send_request(slow, "/metrics", basic("alice:slow"));
  ASSERT_TRUE(gate->wait_entered());
  EXPECT_EQ(get(s.server.port(), "/healthz", ""), 401);                   // no credentials: no check to wait for
  EXPECT_EQ(get(s.server.port(), "/healthz", basic("alice:U*U")), 200);   // remembered: no check
  EXPECT_EQ(get(s.server.port(), "/metrics", basic("alice:U*U")), 200);
  // Two Authorization headers are refused, whichever is right (issue 46, item 12).
  int two = connect_to(s.server.port());
  std::string req = "GET /metrics HTTP/1.1\r\nAuthorization: " + basic("alice:wrong") + "\r\nAuthorization: " +
                    basic("alice:U*U") + "\r\n\r\n";
  send(two, req.data(), req.size(), MSG_NOSIGNAL);
  EXPECT_EQ(status_of(two), 400);
  close(two);
  EXPECT_TRUE(s.stop()) << "SIGTERM's flag did not stop serve while a check was under way";
  close(slow);
}

// Every answer is remembered by user and password hash, failures too; an unknown user costs a check
// against a hash of the default cost; past kMaxQueued waiting checks a login is turned away at once.
TEST(HttpServerAuth, ChecksAreRememberedBoundedAndEqualForUnknownUsers) {
  auto gate = std::make_shared<Gate>();
  Opener opener{gate};
  auto hashes = std::make_shared<std::vector<std::string>>();
  auto m = std::make_shared<std::mutex>();
  BasicAuth::Verify inner = gated(gate);
  BasicAuth auth({{"alice", kUU}}, [inner, hashes, m](const std::string& password, const std::string& hash) {
    {
      std::lock_guard<std::mutex> lock(*m);
      hashes->push_back(hash);
    }
    return inner(password, hash);
  });
  EXPECT_FALSE(auth.allows(basic("alice:wrong")));
  EXPECT_FALSE(auth.allows(basic("alice:wrong")));
  EXPECT_EQ(auth.checks_run(), 1u) << "a failed login is remembered";
  EXPECT_TRUE(auth.allows(basic("alice:U*U")));
  EXPECT_TRUE(auth.allows(basic("alice:U*U")));
  EXPECT_EQ(auth.checks_run(), 2u);
  EXPECT_FALSE(auth.allows(basic("mallory:U*U")));
  EXPECT_FALSE(auth.allows(basic("mallory:U*U")));
  EXPECT_EQ(auth.checks_run(), 3u);
  {
    std::lock_guard<std::mutex> lock(*m);
    ASSERT_EQ(hashes->size(), 3u);
    EXPECT_EQ(bcrypt_cost(hashes->back()), BasicAuth::kDefaultCost) << hashes->back();
    EXPECT_NE(hashes->back(), kUU);
  }
  EXPECT_EQ(auth.check("Bearer x"), BasicAuth::Verdict::kDenied);  // malformed: no check at all
  // One check held open, kMaxQueued waiting behind it, the next turned away.
  EXPECT_EQ(auth.check(basic("alice:slow")), BasicAuth::Verdict::kPending);
  ASSERT_TRUE(gate->wait_entered());
  for (size_t i = 0; i < BasicAuth::kMaxQueued; ++i)
    EXPECT_EQ(auth.check(basic("alice:guess" + std::to_string(i))), BasicAuth::Verdict::kPending) << i;
  EXPECT_EQ(auth.check(basic("alice:one-more")), BasicAuth::Verdict::kBusy);
  EXPECT_EQ(auth.check(basic("alice:guess0")), BasicAuth::Verdict::kPending) << "already waiting: not queued twice";
  EXPECT_EQ(auth.check(basic("alice:U*U")), BasicAuth::Verdict::kAllowed) << "remembered: answered while others wait";
  gate->release();
  EXPECT_FALSE(auth.allows(basic("alice:guess0")));
}


// Clients of one address that each send `hello` and, as soon as the server closes one, connect
// again (issue 46, item 1: 130 of them that sent one byte locked every scraper out, as did a
// partial TLS ClientHello).  Run by a thread until stopped; nothing waits for time.
struct Reconnecting {
  uint16_t port;
  std::string hello;
  size_t count;
  std::atomic<bool> stop{false};
  std::atomic<size_t> spoke{0};     // connections that have sent `hello` (reconnections included)
  std::atomic<size_t> closed{0};    // how many the server closed
  std::thread thread;
  Reconnecting(uint16_t p, std::string h, size_t n) : port(p), hello(std::move(h)), count(n) {
    thread = std::thread([this] { run(); });
  }
  ~Reconnecting() {
    stop = true;
    thread.join();
  }
  void run() {
    struct Conn {
      int fd;
      bool sent;
    };
    std::vector<Conn> conns;
    for (size_t i = 0; i < count; ++i) conns.push_back({connect_from("127.0.0.1", port, 0, true), false});
    while (!stop) {
      std::vector<pollfd> fds;
      for (const Conn& c : conns) fds.push_back({c.fd, static_cast<short>(c.sent ? POLLIN : POLLOUT), 0});
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      for (size_t i = 0; i < conns.size(); ++i) {
        short rev = fds[i].revents;
        if (!rev) continue;
        Conn& c = conns[i];
        if (!c.sent && !(rev & (POLLERR | POLLHUP))) {
          c.sent = send(c.fd, hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size());
          if (c.sent) {
            ++spoke;
            continue;
          }
        }
        // Closed (or answered: whatever the server sent, it closes next): connect again at once.
        close(c.fd);
        ++closed;
        c = {connect_from("127.0.0.1", port, 0, true), false};
      }
    }
    for (const Conn& c : conns) close(c.fd);
  }
  // Whether every connection has spoken at least once (within the guard).
  bool all_spoke() {
    auto until = std::chrono::steady_clock::now() + kGuard;
    while (spoke < count) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::yield();
    }
    return true;
  }
};

int get_from(const char* from, uint16_t port, const std::string& path) {
  int fd = connect_from(from, port);
  send_request(fd, path, "");
  int status = status_of(fd);
  close(fd);
  return status;
}

TEST(HttpServerLimits, ReconnectingSpeakersOfOneAddressNeverKeepAnotherOut) {
  Running s({}, nullptr);
  // 200 connections (past the default 64 in all, 16 per address) that each send one byte.
  Reconnecting attack(s.server.port(), "G", 200);
  ASSERT_TRUE(attack.all_spoke());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(get_from("127.0.0.2", s.server.port(), "/metrics"), 200) << "scrape " << i;
  EXPECT_GT(attack.closed.load(), 0u) << "the attacker's connections past the limits were closed";
}

// A TLS request from `from` through OpenSSL (no certificate check): the answer's status, 0 when
// the handshake or the request failed.
int tls_get_from(const char* from, uint16_t port, const std::string& path) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  int fd = connect_from(from, port);
  SSL_set_fd(ssl, fd);
  int status = 0;
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  if (SSL_connect(ssl) == 1 && SSL_write(ssl, req.data(), static_cast<int>(req.size())) == static_cast<int>(req.size())) {
    std::string in;
    char buf[4096];
    for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) in.append(buf, static_cast<size_t>(n));
    if (in.rfind("HTTP/1.1 ", 0) == 0) status = std::atoi(in.c_str() + 9);
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  close(fd);
  return status;
}

TEST(HttpServerLimits, PartialTlsHellosOfOneAddressNeverKeepAnotherOut) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no openssl(1)";
  char tmpl[] = "/tmp/gpumap-tls-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::string cmd = "cd " + dir +
                    " && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=localhost "
                    ">/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  WebConfig web = parse_web_config("tls_server_config: {cert_file: cert.pem, key_file: key.pem}", dir + "/web.yml");
  Running s(web, nullptr);
  int removed = std::system(("rm -rf " + dir).c_str());  // (the server holds the certificate read)
  EXPECT_EQ(removed, 0);
  // The first 9 bytes of a ClientHello: a handshake record header and the message's type and length.
  const std::string hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc", 9);
  Reconnecting attack(s.server.port(), hello, 200);
  ASSERT_TRUE(attack.all_spoke());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(tls_get_from("127.0.0.2", s.server.port(), "/metrics"), 200) << "scrape " << i;
}

// Clients that send a request and never read its answer (issue 46, item 9: 45 of them made every
// scrape 503 for the write timeout, holding the request slots): an answer made frees its slot, and
// a full house of such clients from two addresses makes room for a scraper from a third.
TEST(HttpServerLimits, ClientsThatDoNotReadHoldOnlyTheirOwnConnections) {
  HttpLimits limits;
  limits.max_requests = 4;
  limits.max_connections = 8;
  limits.max_per_peer = 4;
  // An answer larger than what the kernel buffers for a client with a 4 KiB window.
  Running s({}, nullptr, limits, 16u << 20);
  std::vector<int> held;
  for (const char* from : {"127.0.0.1", "127.0.0.3"}) {
    for (int i = 0; i < 4; ++i) {
      int fd = connect_from(from, s.server.port(), 4096);
      send_request(fd, "/big", "");
      pollfd p = {fd, POLLIN, 0};  // the answer has begun: its request was served
      EXPECT_EQ(poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kGuard).count())), 1) << from << " " << i;
      held.push_back(fd);
    }
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(get_from("127.0.0.2", s.server.port(), "/metrics"), 200) << "scrape " << i;
  for (int fd : held) close(fd);
}

// The connection states' table (issue 45, item 4): one row per state, in the enum's order, and what
// the rows promise together.
TEST(HttpServerStates, OneRowPerStateAndWhatTheRowsPromise) {
  const std::vector<ConnStateRow>& rows = connection_states();
  ASSERT_EQ(rows.size(), static_cast<size_t>(ConnState::kWriting) + 1);
  std::set<std::string> names;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ConnStateRow& r = rows[i];
    EXPECT_EQ(static_cast<size_t>(r.state), i) << r.name;
    EXPECT_EQ(&state_row(r.state), &r) << r.name;
    EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
    // A deadline exists exactly where passing it does something.
    EXPECT_EQ(r.deadline == ConnDeadline::kNone, r.on_deadline == OnDeadline::kNothing) << r.name;
    // A request that holds a max_requests slot is never closed for room (max_requests bounds it) and
    // frees its slot as soon as its client hangs up.
    if (r.counted) {
      EXPECT_EQ(r.rank, kNeverEvicted) << r.name;
      EXPECT_EQ(r.hangup, Hangup::kPollRdhup) << r.name;
    }
    // A state that waits (asked again) reads nothing from its client: it waits for its hang-up only.
    EXPECT_EQ(r.asks_again, r.events == POLLRDHUP) << r.name;
    EXPECT_EQ(r.events == POLLRDHUP, r.hangup == Hangup::kPollRdhup) << r.name;
    EXPECT_FALSE(r.tls_turns && r.events == POLLRDHUP) << r.name << ": waiting on OpenSSL while waiting for no byte";
    EXPECT_TRUE(r.rank == kNeverEvicted || (r.rank >= 0 && r.rank <= 3 && r.rank_if >= 0 && r.rank_if <= 3)) << r.name;
  }
  // Only the handler's wait has no deadline: every other state ends within a limit.
  for (const ConnStateRow& r : rows) EXPECT_EQ(r.deadline == ConnDeadline::kNone, r.state == ConnState::kQueued) << r.name;
  EXPECT_TRUE(state_row(ConnState::kQueued).counted);
  EXPECT_FALSE(state_row(ConnState::kWriting).counted) << "a client that does not read would hold a slot (issue 46, item 9)";
}

// What poll waits for is the row's, turned by TLS where the row says (a handshake that must write
// while the head is read, a record that must be read while the answer is written).
TEST(HttpServerStates, PollWaitsForWhatTheRowSays) {
  for (const ConnStateRow& r : connection_states()) {
    EXPECT_EQ(poll_events(r.state, false, false), r.events) << r.name;
    EXPECT_EQ(poll_events(r.state, true, false), r.tls_turns ? POLLIN : r.events) << r.name;
    EXPECT_EQ(poll_events(r.state, false, true), r.tls_turns ? POLLOUT : r.events) << r.name;
  }
  EXPECT_EQ(poll_events(ConnState::kConnected, false, false), POLLIN);
  EXPECT_EQ(poll_events(ConnState::kReadingHead, false, true), POLLOUT);
  EXPECT_EQ(poll_events(ConnState::kAuthWait, true, false), POLLRDHUP);
  EXPECT_EQ(poll_events(ConnState::kQueued, false, false), POLLRDHUP);
  EXPECT_EQ(poll_events(ConnState::kWriting, false, false), POLLOUT);
  EXPECT_EQ(poll_events(ConnState::kWriting, true, false), POLLIN);
}

// The order in which connections are closed to make room (docs/metrics.md, issue 46 item 1): one
// that sent nothing, one sending its head, an answer stalled behind a full window, any answer; a
// request waiting for its answer or its check never.
TEST(HttpServerStates, EvictionRanksAreTheCostliestFirst) {
  EXPECT_EQ(eviction_rank(ConnState::kConnected, false, false), 0);
  EXPECT_EQ(eviction_rank(ConnState::kConnected, true, false), 1) << "bytes waiting unread: it spoke";
  EXPECT_EQ(eviction_rank(ConnState::kReadingHead, false, false), 1);
  EXPECT_EQ(eviction_rank(ConnState::kReadingHead, true, true), 1);
  EXPECT_EQ(eviction_rank(ConnState::kWriting, false, true), 2);
  EXPECT_EQ(eviction_rank(ConnState::kWriting, false, false), 3);
  EXPECT_EQ(eviction_rank(ConnState::kWriting, true, false), 3);
  for (ConnState s : {ConnState::kAuthWait, ConnState::kQueued})
    for (bool w : {false, true}) EXPECT_EQ(eviction_rank(s, w, w), kNeverEvicted) << state_row(s).name;
}

// docs/metrics.md's table of the states, one line per row, as the row says (rendered here).
std::string seconds_text(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

std::string doc_line(const ConnStateRow& r) {
  HttpLimits defaults;
  std::string poll = r.events == POLLIN ? "readable" : r.events == POLLOUT ? "writable" : r.events == POLLRDHUP ? "its hang-up" : "?";
  if (r.tls_turns) poll += " (TLS: what OpenSSL asks)";
  std::string deadline = r.deadline == ConnDeadline::kRequest
                             ? "the request timeout (" + seconds_text(defaults.request_timeout_s) + " s) from the connection's start"
                         : r.deadline == ConnDeadline::kWrite
                             ? "the write timeout (" + seconds_text(defaults.write_timeout_s) + " s) from the answer made"
                             : "none";
  std::string past = r.on_deadline == OnDeadline::kAnswer408AndClose ? "408 (not under TLS), closed"
                     : r.on_deadline == OnDeadline::kAnswer503       ? "503"
                     : r.on_deadline == OnDeadline::kClose           ? "closed"
                                                                     : "—";
  std::string rank = r.rank == kNeverEvicted ? "never" : std::to_string(r.rank);
  if (r.when == RankCase::kBytesWaiting) rank += "; " + std::to_string(r.rank_if) + " while bytes (or its close) wait unread";
  if (r.when == RankCase::kStalled) rank += "; " + std::to_string(r.rank_if) + " once it took no byte for 1 s";
  std::string hangup = r.hangup == Hangup::kReadEnds    ? "the read ends: closed"
                       : r.hangup == Hangup::kPollRdhup ? "POLLRDHUP: closed at once"
                                                        : "a half-close is not seen; a reset fails the write: closed";
  return "| `" + std::string(r.name) + "` | " + poll + " | " + deadline + " | " + past + " | " + rank + " | " +
         (r.counted ? "yes" : "no") + " | " + (r.asks_again ? "every 50 ms" : "no") + " | " + hangup + " |";
}

TEST(HttpServerStates, TheDocsTableIsTheRows) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/metrics.md");
  ASSERT_TRUE(in) << "docs/metrics.md";
  const std::string header =
      "| state | poll waits for | deadline | past it | eviction rank | holds a max_requests slot | asked again | hang-up |";
  std::vector<std::string> doc;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line == header) in_table = true;
    else if (in_table && line.rfind("| `", 0) == 0) doc.push_back(line);
    else if (in_table && line.rfind("|--", 0) != 0) break;
  }
  ASSERT_TRUE(in_table) << "docs/metrics.md has no table headed\n" << header;
  std::vector<std::string> want;
  std::string paste;
  for (const ConnStateRow& r : connection_states()) {
    want.push_back(doc_line(r));
    paste += want.back() + "\n";
  }
  EXPECT_EQ(doc, want) << "docs/metrics.md's states differ from connection_states(); its rows are:\n" << paste;
}

// A head that is not in by the request deadline (rows connected and reading-head): 408, closed.
TEST(HttpServerStates, AHeadNotInByItsDeadlineIs408) {
  for (ConnState st : {ConnState::kConnected, ConnState::kReadingHead}) {
    ASSERT_EQ(state_row(st).deadline, ConnDeadline::kRequest);
    ASSERT_EQ(state_row(st).on_deadline, OnDeadline::kAnswer408AndClose);
  }
  HttpLimits limits;
  limits.request_timeout_s = 0.2;
  Running s({}, nullptr, limits);
  int silent = connect_to(s.server.port());
  EXPECT_EQ(status_of(silent), 408) << "connected";
  close(silent);
  int partial = connect_to(s.server.port());
  std::string part = "GET /metrics HTTP/1.1\r\nHo";
  EXPECT_EQ(send(partial, part.data(), part.size(), MSG_NOSIGNAL), static_cast<ssize_t>(part.size()));
  EXPECT_EQ(status_of(partial), 408) << "reading-head";
  close(partial);
}

// A credential check not finished by the request deadline (row auth-wait): 503; the check held
// open by the test never finishes.  (The deadline leaves the head seconds to arrive, else it would
// be 408 in reading-head.)
TEST(HttpServerStates, ACheckNotDoneByItsDeadlineIs503) {
  ASSERT_EQ(state_row(ConnState::kAuthWait).on_deadline, OnDeadline::kAnswer503);
  auto gate = std::make_shared<Gate>();
  WebConfig web;
  web.basic_auth_users = {{"alice", kUU}};
  HttpLimits limits;
  limits.request_timeout_s = 3;
  Running s(web, gated(gate), limits);
  Opener opener{gate};
  int slow = connect_to(s.server.port());
  send_request(slow, "/metrics", basic("alice:slow"));
  ASSERT_TRUE(gate->wait_entered());
  EXPECT_EQ(status_of(slow), 503);
  close(slow);
}

// A request waiting for the handler (row queued) holds its max_requests slot, is asked again until
// the handler answers, and frees its slot when its client hangs up.
TEST(HttpServerStates, AQueuedRequestHoldsItsSlotUntilAnsweredOrItsClientHangsUp) {
  ASSERT_TRUE(state_row(ConnState::kQueued).counted);
  ASSERT_TRUE(state_row(ConnState::kQueued).asks_again);
  ASSERT_EQ(state_row(ConnState::kQueued).hangup, Hangup::kPollRdhup);
  struct Hold {
    std::mutex m;
    std::condition_variable cv;
    int asked = 0;  // how many times the handler was asked for /hold
    bool release = false;
    bool wait_asked(int n) {
      std::unique_lock<std::mutex> lock(m);
      return cv.wait_for(lock, kGuard, [&] { return asked >= n; });
    }
  };
  auto hold = std::make_shared<Hold>();
  HttpLimits limits;
  limits.max_requests = 1;
  Running s({}, nullptr, limits, 0, [hold](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.path == "/hold") {
      std::lock_guard<std::mutex> lock(hold->m);
      if (!hold->release) {
        ++hold->asked;
        hold->cv.notify_all();
        return std::nullopt;
      }
    }
    return HttpResponse{200, "text/plain", r.path, {}};
  });
  int held = connect_to(s.server.port());
  send_request(held, "/hold", "");
  ASSERT_TRUE(hold->wait_asked(1));
  EXPECT_EQ(get(s.server.port(), "/other", ""), 503) << "the queued request holds the only slot";
  {
    std::lock_guard<std::mutex> lock(hold->m);
    hold->release = true;
  }
  EXPECT_EQ(status_of(held), 200) << "asked again until answered";
  close(held);
  {
    std::lock_guard<std::mutex> lock(hold->m);
    hold->release = false;
    hold->asked = 0;
  }
  int gone = connect_to(s.server.port());
  send_request(gone, "/hold", "");
  ASSERT_TRUE(hold->wait_asked(1));
  close(gone);  // its hang-up is seen before the next connection's head is read
  EXPECT_EQ(get(s.server.port(), "/other", ""), 200) << "the hang-up freed the slot";
}
}  // namespace
}  // namespace gpumap
