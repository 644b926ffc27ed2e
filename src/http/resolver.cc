#include "http/resolver.h"

#include <netdb.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "http/message.h"

namespace gpumap {

namespace {

std::vector<ResolvedAddress> copy_addresses(const addrinfo* res) {
  std::vector<ResolvedAddress> out;
  for (const addrinfo* a = res; a; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    ResolvedAddress r;
    r.family = a->ai_family;
    r.socktype = a->ai_socktype;
    r.protocol = a->ai_protocol;
    std::memcpy(&r.addr, a->ai_addr, a->ai_addrlen);
    r.len = a->ai_addrlen;
    out.push_back(r);
  }
  return out;
}

/// getaddrinfo for a TCP connection to `host`:`port`; `flags` as hints.ai_flags.  Returns its code.
int lookup(const std::string& host, int port, int flags, std::vector<ResolvedAddress>* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc == 0) {
    *out = copy_addresses(res);
    ::freeaddrinfo(res);
  }
  return rc;
}

class SystemResolver : public Resolver {
 public:
  std::vector<ResolvedAddress> resolve(const std::string& host, int port) override {
    std::vector<ResolvedAddress> out;
    int rc = lookup(host, port, 0, &out);
    if (rc != 0) {
      std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc);
      throw HttpError(HttpFailure::kResolve, "cannot resolve " + host + ": " + why);
    }
    return out;
  }
};

/// One lookup in flight, shared by the callers that wait for it and the thread that makes it.
struct Lookup {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::vector<ResolvedAddress> addresses;
  bool failed = false;
  HttpFailure failure = HttpFailure::kResolve;
  std::string message;
};

/// The lookups in flight, by resolver and name.  Made once and never destroyed: an abandoned
/// lookup's thread may still reach it while the process exits and runs static destructors.
struct InFlight {
  std::mutex m;
  std::map<std::pair<const Resolver*, std::string>, std::shared_ptr<Lookup>> lookups;
};
InFlight& in_flight() {
  static InFlight* registry = new InFlight;
  return *registry;
}

/// Starts the lookup on its own thread, or joins the one already running for this name.
std::shared_ptr<Lookup> start(const std::shared_ptr<Resolver>& resolver, const std::string& host, int port) {
  InFlight& f = in_flight();
  std::pair<const Resolver*, std::string> key{resolver.get(), host + "\n" + std::to_string(port)};
  std::lock_guard<std::mutex> hold(f.m);
  auto it = f.lookups.find(key);
  if (it != f.lookups.end()) return it->second;
  auto l = std::make_shared<Lookup>();
  try {
    // The thread holds the resolver and the lookup; the caller may be gone when it finishes.
    std::thread([resolver, l, host, port, key] {
      std::vector<ResolvedAddress> got;
      bool failed = false;
      HttpFailure kind = HttpFailure::kResolve;
      std::string message;
      try {
        got = resolver->resolve(host, port);
      } catch (const HttpError& e) {
        failed = true;
        kind = e.kind();
        message = e.what();
      } catch (const std::exception& e) {
        failed = true;
        message = "cannot resolve " + host + ": " + e.what();
      }
      {
        InFlight& reg = in_flight();
        std::lock_guard<std::mutex> g(reg.m);
        auto at = reg.lookups.find(key);
        if (at != reg.lookups.end() && at->second == l) reg.lookups.erase(at);
      }
      {
        std::lock_guard<std::mutex> g(l->m);
        l->done = true;
        l->addresses = std::move(got);
        l->failed = failed;
        l->failure = kind;
        l->message = std::move(message);
      }
      l->cv.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    throw HttpError(HttpFailure::kUnreachable, "cannot start the lookup of " + host + ": " + e.what());
  }
  f.lookups.emplace(key, l);
  return l;
}

}  // namespace

std::shared_ptr<Resolver> system_resolver() {
  // One for the process, so every transport's lookups of a name share the one in flight (a live
  // view that makes a transport per refresh adds no thread while DNS hangs).  An abandoned lookup's
  // thread holds its own reference, so the resolver outlives this one at exit if it must.
  static const std::shared_ptr<Resolver> shared = std::make_shared<SystemResolver>();
  return shared;
}

std::vector<ResolvedAddress> resolve_within(const std::shared_ptr<Resolver>& resolver, const std::string& host, int port,
                                            std::chrono::steady_clock::time_point deadline) {
  std::vector<ResolvedAddress> numeric;  // an address needs no lookup: converted here, never blocks
  if (lookup(host, port, AI_NUMERICHOST, &numeric) == 0) return numeric;
  std::shared_ptr<Lookup> l = start(resolver, host, port);
  std::unique_lock<std::mutex> hold(l->m);
  if (!l->cv.wait_until(hold, deadline, [&] { return l->done; }))
    throw HttpError(HttpFailure::kTimeout,
                    "the name lookup of " + host +
                        " did not finish in time (the DNS server in /etc/resolv.conf did not answer): check that "
                        "server, or give the server's IP address in the URL");
  if (l->failed) throw HttpError(l->failure, l->message);
  return l->addresses;
}

}  // namespace gpumap
