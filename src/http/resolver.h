// The name lookup of the fleet view's HTTP client, bounded by the request's deadline.
//
// getaddrinfo blocks as long as the system's resolver wants (resolv.conf's timeout × attempts ×
// nameservers: 10 s and more for a DNS server that drops packets), and no portable glibc call
// takes a deadline: getaddrinfo_a is GLIBC_2.34 in libc when built on Debian 12 (the portable
// build must run on glibc 2.31), and gai_cancel cannot stop a lookup already running.  So the
// lookup runs on a helper thread and the caller waits for it until its deadline, then gives up
// on it: the thread finishes the lookup on its own (at most the resolver's own limit), holding
// the only references to what it writes, and ends; a process that exits before it is not held
// up.  Lookups of one name by one resolver that overlap share one thread and one answer, so the
// fleet view's queries sent at once make one lookup, and a DNS server that never answers gets at
// most one abandoned lookup per name in flight, however often a caller retries.
#pragma once
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace gpumap {

/// One address to connect to, as getaddrinfo gives it.
struct ResolvedAddress {
  int family = 0, socktype = 0, protocol = 0;
  sockaddr_storage addr{};
  socklen_t len = 0;
};

/// The seam: a blocking lookup of `host` (a name or an address) for TCP `port`.  Throws
/// HttpError(kResolve) when the name does not resolve.  Called on a helper thread, possibly after
/// the caller has given up on the answer, so it must keep no reference to the caller's state.
class Resolver {
 public:
  virtual ~Resolver() = default;
  virtual std::vector<ResolvedAddress> resolve(const std::string& host, int port) = 0;
};

/// The system's resolver (getaddrinfo: /etc/hosts, DNS, whatever nsswitch.conf names); the same
/// one every call, so lookups from several transports share what is in flight.
std::shared_ptr<Resolver> system_resolver();

/// `resolver->resolve(host, port)` on a helper thread, waited for until `deadline`.  Throws what
/// the lookup threw, or HttpError(kTimeout) naming the host and what to check when the deadline
/// passes first (the lookup is then abandoned, not stopped: see the file's comment).
std::vector<ResolvedAddress> resolve_within(const std::shared_ptr<Resolver>& resolver, const std::string& host, int port,
                                            std::chrono::steady_clock::time_point deadline);

}  // namespace gpumap
