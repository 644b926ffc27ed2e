// The HTTP server on a loopback port, in process (issue 46, item 2): the bcrypt checks of basic
// authentication run off the server's loop, remembered (failures too) and bounded.  A check the
// test holds open stands for a slow one, so nothing here is timed: the bounds on the waits only
// keep a failing test from hanging.
#include "os/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>

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

// A server on 127.0.0.1 that answers every path with 200, served by a thread.
struct Running {
  volatile sig_atomic_t stop_flag = 0;
  HttpServer server;
  std::future<void> done;
  Running(const WebConfig& web, BasicAuth::Verify verify) : server("127.0.0.1", 0, {}, web, std::move(verify)) {
    done = std::async(std::launch::async, [this] {
      server.serve([](const HttpRequest& r) { return std::optional<HttpResponse>(HttpResponse{200, "text/plain", r.path, {}}); },
                   &stop_flag);
    });
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

int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

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

}  // namespace
}  // namespace gpumap
