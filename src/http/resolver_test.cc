#include "http/resolver.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "model/error.h"
#include "http/client.h"
#include "session/fleet.h"

namespace gpumap {
namespace {

using Clock = std::chrono::steady_clock;

/// A resolver whose lookups block until release(): a DNS server that never answers, for as long
/// as the test wants.  Counts its lookups; answers 127.0.0.1 once released.
class StuckResolver : public Resolver {
 public:
  std::vector<ResolvedAddress> resolve(const std::string& host, int port) override {
    std::unique_lock<std::mutex> hold(m_);
    ++calls_;
    hosts_.push_back(host);
    cv_.notify_all();
    cv_.wait(hold, [&] { return released_; });
    ResolvedAddress a;
    auto* in = reinterpret_cast<sockaddr_in*>(&a.addr);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.family = AF_INET;
    a.socktype = SOCK_STREAM;
    a.len = sizeof(sockaddr_in);
    return {a};
  }
  void release() {
    std::lock_guard<std::mutex> hold(m_);
    released_ = true;
    cv_.notify_all();
  }
  int calls() {
    std::lock_guard<std::mutex> hold(m_);
    return calls_;
  }
  bool released() {
    std::lock_guard<std::mutex> hold(m_);
    return released_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int calls_ = 0;
  bool released_ = false;
  std::vector<std::string> hosts_;
};

class FailingResolver : public Resolver {
 public:
  std::vector<ResolvedAddress> resolve(const std::string& host, int) override {
    throw HttpError(HttpFailure::kResolve, "cannot resolve " + host + ": Name or service not known");
  }
};

Clock::time_point in_ms(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

TEST(Resolver, ALookupThatNeverAnswersIsATimeoutNamingTheHostAndTheFix) {
  auto stuck = std::make_shared<StuckResolver>();
  try {
    resolve_within(stuck, "no-such.example", 9090, in_ms(100));
    FAIL() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpFailure::kTimeout) << e.what();
    std::string m = e.what();
    EXPECT_NE(m.find("no-such.example"), std::string::npos) << m;
    EXPECT_NE(m.find("/etc/resolv.conf"), std::string::npos) << m;
    EXPECT_NE(m.find("IP address"), std::string::npos) << m;
  }
  // The deadline, not the lookup, ended the wait: it is still running.
  EXPECT_FALSE(stuck->released());
  EXPECT_EQ(stuck->calls(), 1);
  stuck->release();  // the abandoned lookup ends on its own thread
}

TEST(Resolver, LookupsOfOneNameInFlightShareOneThread) {
  auto stuck = std::make_shared<StuckResolver>();
  std::vector<std::thread> callers;
  std::vector<int> timed_out(8, 0);
  for (int i = 0; i < 8; ++i)  // as the fleet view sends its queries at once
    callers.emplace_back([&, i] {
      try {
        resolve_within(stuck, "prom.example", 9090, in_ms(200));
      } catch (const HttpError& e) {
        timed_out[i] = e.kind() == HttpFailure::kTimeout;
      }
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(timed_out, std::vector<int>(8, 1));
  EXPECT_EQ(stuck->calls(), 1) << "one lookup for eight callers";
  // A retry while that lookup is still stuck joins it too: a DNS server that never answers gets
  // one abandoned lookup per name, however often the caller tries.
  EXPECT_THROW(resolve_within(stuck, "prom.example", 9090, in_ms(50)), HttpError);
  EXPECT_EQ(stuck->calls(), 1);
  // Once it answers, a caller that is still waiting gets the answer.
  std::thread later([&] {
    std::vector<ResolvedAddress> a = resolve_within(stuck, "prom.example", 9090, in_ms(60000));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(ntohs(reinterpret_cast<const sockaddr_in*>(&a[0].addr)->sin_port), 9090);
  });
  stuck->release();
  later.join();
}

TEST(Resolver, AnAddressNeedsNoLookupAndAFailureIsPassedOn) {
  auto stuck = std::make_shared<StuckResolver>();
  std::vector<ResolvedAddress> v4 = resolve_within(stuck, "127.0.0.1", 9090, in_ms(60000));
  ASSERT_FALSE(v4.empty());
  EXPECT_EQ(v4[0].family, AF_INET);
  std::vector<ResolvedAddress> v6 = resolve_within(stuck, "::1", 9090, in_ms(60000));
  ASSERT_FALSE(v6.empty());
  EXPECT_EQ(v6[0].family, AF_INET6);
  EXPECT_EQ(stuck->calls(), 0);
  EXPECT_EQ(system_resolver(), system_resolver()) << "one per process: transports share lookups in flight";
  try {
    resolve_within(std::make_shared<FailingResolver>(), "nowhere.example", 80, in_ms(60000));
    FAIL() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.kind(), HttpFailure::kResolve);
    EXPECT_STREQ(e.what(), "cannot resolve nowhere.example: Name or service not known");
  }
}

// The fleet view over the real transport with a resolver that never answers: the documented exit
// 1 with "did not answer within --timeout", naming the URL, the host and what to check.
TEST(Resolver, TheFleetViewSaysTheLookupDidNotAnswerWithinItsTimeout) {
  auto stuck = std::make_shared<StuckResolver>();
  std::unique_ptr<HttpTransport> http = socket_transport(HttpAuth{}, stuck);
  FleetRequest req;
  req.prometheus = "http://no-such.example:9090";
  req.timeout_s = 0.2;
  try {
    read_fleet(req, *http, 1.7e9);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitError);
    std::string m = e.what();
    EXPECT_NE(m.find("Prometheus at http://no-such.example:9090 did not answer within 0.2 s"), std::string::npos) << m;
    EXPECT_NE(m.find("the name lookup of no-such.example did not finish in time"), std::string::npos) << m;
  }
  EXPECT_FALSE(stuck->released());
  EXPECT_EQ(stuck->calls(), 1) << "the queries sent at once shared one lookup";
  stuck->release();
}

}  // namespace
}  // namespace gpumap
