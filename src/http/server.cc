#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <vector>

#include "http/tls.h"
#include "model/error.h"

namespace gpumap {

namespace {

using Clock = std::chrono::steady_clock;

struct Client {
  int fd = -1;
  SSL* ssl = nullptr;
  std::string peer;      // its address, for the per-peer limit
  std::string in;
  // The answer: its own bytes and, by reference, the body it shares with other answers (never a
  // copy of it: issue 56 item 11); the next byte to send is out[piece] at `offset`.
  std::vector<WirePiece> out;
  size_t piece = 0, offset = 0, sent = 0;
  const SharedBody* shares = nullptr;  // the shared body it writes (the bound on those held)
  Clock::time_point answered;          // when its answer was made
  ConnState state = ConnState::kConnected;     // what it means: state_row(state)
  bool want_write = false, want_read = false;  // TLS: what the last call waits for
  bool gzip = false;
  std::string authorization;  // its Authorization header, while kAuthWait
  size_t poll_at = SIZE_MAX;  // its entry in this round's poll list (SIZE_MAX: accepted this round)
  HttpRequest req;
  Clock::time_point started, deadline;  // deadline: the one its state's row names
  Clock::time_point progressed;  // while writing: when the client last took a byte of the answer
};

// An answer none of whose bytes the client took for this long is stuck behind a full window: its
// connection is the first answer closed to make room (a scraper reading takes bytes every round trip).
constexpr double kStalledS = 1.0;
// A new connection is not closed to enforce a limit before this age: a scraper's request arrives
// within it and is then being answered, never closed for room.
constexpr double kGraceS = 0.1;
// Each connection's socket buffers (the kernel doubles them for its bookkeeping, and counts them
// against the memory cgroup): the send buffer bounds what an answer nobody reads holds in the
// kernel (autotuning would grow it to tcp_wmem's maximum, 4 MiB), the receive buffer what a
// client sends that is never read (a request head is at most 8 KiB).  128 KiB sent per round trip
// is 13 MB/s at 10 ms: a 300 kB gzip answer in 25 ms.
constexpr int kSendBuffer = 64 << 10, kReceiveBuffer = 16 << 10;
// The shared bodies (frames) that connections still writing them may hold at once: past it, the
// connections writing the oldest are closed (they are that many frames behind).
constexpr size_t kHeldBodies = 3;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string peer_of(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
  std::string p = buf;
  if (p.rfind("::ffff:", 0) == 0) p = p.substr(7);  // one IPv4 client is one peer, however it arrives
  return p;
}

}  // namespace

void HttpServer::setup(const WebConfig& web, BasicAuth::Verify verify) {
  set_nonblocking(fd_);
  sockaddr_storage ss = {};
  socklen_t len = sizeof ss;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  char buf[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof buf);
  host_ = buf;
  if (web.tls) tls_ = server_tls(*web.tls);
  if (!web.basic_auth_users.empty()) auth_ = std::make_unique<BasicAuth>(web.basic_auth_users, std::move(verify));
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

HttpServer::HttpServer(int listen_fd, HttpLimits limits, const WebConfig& web) : fd_(listen_fd), limits_(limits) {
  setup(web);
}

HttpServer::HttpServer(const std::string& host, uint16_t port, HttpLimits limits, const WebConfig& web,
                       BasicAuth::Verify verify)
    : limits_(limits) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  std::string where = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port_text;
  if (int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res); rc != 0)
    throw Error(kExitUsage, "--listen " + where + ": " + gai_strerror(rc), "give a numeric address or localhost");
  int err = 0;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      fd_ = fd;
      break;
    }
    err = errno;
    close(fd);
  }
  freeaddrinfo(res);
  if (fd_ < 0)
    throw Error(kExitError, "cannot listen on " + where + ": " + std::strerror(err),
                err == EADDRINUSE ? "another program uses that port: choose another with --listen HOST:PORT"
                                  : "check the address is this machine's, and that this user may use the port");
  try {
    setup(web, std::move(verify));
  } catch (...) {
    close(fd_);
    if (reserve_fd_ >= 0) close(reserve_fd_);
    throw;
  }
}

HttpServer::~HttpServer() {
  if (fd_ >= 0) close(fd_);
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

// making room or pausing when short of descriptors), then step each connection through what came,
// then trim the connections past the limits.
struct HttpServer::Loop {
  using It = std::list<Client>::iterator;
  HttpServer& s;
  const Handler& handler;
  int wake_fd;
  std::list<Client> clients;
  std::map<std::string, size_t> per_peer;
  size_t requests = 0;  // clients in a state counted against max_requests
  Clock::time_point accept_paused_until;
  size_t fd_limit = 0, fd_headroom = 0;  // RLIMIT_NOFILE (0: none), and the descriptors kept free under it

  void run(const volatile sig_atomic_t* stop);
  // Taking connections.
  void accept_burst();
  int accept_when_short(sockaddr_storage& ss, socklen_t& len);
  bool descriptor_free() const;
  void take(int cfd, const std::string& peer);
  void refuse(int cfd, const char* why);
  // A connection's round and its transitions.
  bool step(Client& c, short rev, Clock::time_point now);  // false: close it
  bool on_readable(Client& c, Clock::time_point now);
  void on_head(Client& c, const ParsedHead& p, Clock::time_point now);
  bool on_auth_verdict(Client& c, Clock::time_point now);
  void on_answer(Client& c);
  bool on_writable(Client& c, Clock::time_point now);
  bool on_deadline(Client& c);
  void admit(Client& c);
  void answer(Client& c, const HttpResponse& r);
  void enter(Client& c, ConnState next);
  ssize_t io(Client& c, bool write, char* buf, size_t n);
  // Room.
  It drop(It it);
  It victim(const std::string& peer, double min_age_s);
  bool evict_from(const std::string& peer, double min_age_s = 0);
  bool make_room(const std::string& newcomer, double min_age_s = 0);
  void trim();
  void bound_held_bodies();
};

void HttpServer::serve(const Handler& handler, const volatile sig_atomic_t* stop, int wake_fd) {
  Loop loop{*this, handler, wake_fd, {}, {}, 0, {}, 0};
  // Descriptors are left free for the rest of the process: the reader thread's /proc and driver
  // reads, and UBSan's vptr check in the sanitizer build, which opens a pipe to probe memory and
  // reports a false "invalid vptr" when it cannot (the crash in web_test's `ulimit -n 16`).
  rlimit nofile = {};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
    loop.fd_limit = static_cast<size_t>(nofile.rlim_cur);
  loop.fd_headroom = std::min<size_t>(8, loop.fd_limit / 4);
  loop.run(stop);
}

namespace {
void drain(int fd) {
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {
  }
}
}  // namespace

void HttpServer::Loop::run(const volatile sig_atomic_t* stop) {
  while (!*stop) {
    std::vector<pollfd> fds;
    bool accepting = Clock::now() >= accept_paused_until;
    fds.push_back({accepting ? s.fd_ : -1, POLLIN, 0});
    if (wake_fd >= 0) fds.push_back({wake_fd, POLLIN, 0});
    if (s.auth_) fds.push_back({s.auth_->wake_fd(), POLLIN, 0});
    bool asking = false;
    for (Client& c : clients) {
      asking |= state_row(c.state).asks_again;
      c.poll_at = fds.size();
      fds.push_back({c.fd, poll_events(c.state, c.want_read, c.want_write), 0});
    }
    int timeout_ms = asking ? 50 : 200;  // a signal's flag is seen within 200 ms
    if (!accepting) timeout_ms = std::min(timeout_ms, 100);
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) throw Error(kExitError, std::string("poll: ") + std::strerror(errno));
    size_t k = 0;
    if (fds[k++].revents & POLLIN) accept_burst();
    if (wake_fd >= 0 && (fds[k++].revents & POLLIN)) drain(wake_fd);
    if (s.auth_ && (fds[k++].revents & POLLIN)) drain(s.auth_->wake_fd());  // a check finished: its clients ask below
    auto now = Clock::now();
    for (auto it = clients.begin(); it != clients.end();) {
      short rev = it->poll_at < fds.size() ? fds[it->poll_at].revents : 0;
      it = step(*it, rev, now) ? std::next(it) : drop(it);
    }
    trim();
  }
  while (!clients.empty()) drop(clients.begin());
}

void HttpServer::Loop::accept_burst() {
  for (int round = 0; round < 64; ++round) {  // a burst is taken over several turns, between reads
    // The descriptor it would take leaves too few free: as out of descriptors (room made by
    // closing a connection a second old, else the waiting ones stay queued and accepting pauses).
    if (!descriptor_free() && !(make_room("", 1.0) && descriptor_free())) {
      accept_paused_until = after(0.1);
      break;
    }
    sockaddr_storage ss = {};
    socklen_t len = sizeof ss;
    int cfd = accept4(s.fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      cfd = accept_when_short(ss, len);
      if (cfd < 0) {
        accept_paused_until = after(0.1);
        break;
      }
    }
    if (cfd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until = after(0.1);
      break;
    }
    if (s.reserve_fd_ < 0) s.reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    take(cfd, peer_of(ss));
  }
}

// Whether the descriptor a connection would take now (the lowest free: descriptors are numbered
// so) leaves fd_headroom free under the limit.
bool HttpServer::Loop::descriptor_free() const {
  if (!fd_limit) return true;
  int probe = fcntl(s.fd_, F_DUPFD_CLOEXEC, 0);
  if (probe < 0) return false;
  close(probe);
  return static_cast<size_t>(probe) + fd_headroom < fd_limit;
}

// Out of descriptors: make room by closing a silent connection and try once more (-1: none taken);
// else the waiting ones stay queued (a scraper among them gets the next room) and the caller pauses
// accepting (a listening socket with a queue is always readable: polling it now would spin).  When
// none of ours holds the descriptors, the first waiting one is answered 503 through the reserve
// descriptor.  (Only connections a second old: room made at once for each client that reconnects
// would be a loop of its own while the descriptors stay short.)
int HttpServer::Loop::accept_when_short(sockaddr_storage& ss, socklen_t& len) {
  if (make_room("", 1.0)) return accept4(s.fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (s.reserve_fd_ >= 0 && clients.empty()) {  // no connection of ours holds them: say so
    close(s.reserve_fd_);
    s.reserve_fd_ = -1;
    int rfd = accept4(s.fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (rfd >= 0) refuse(rfd, "gpumap serve is out of file descriptors");
    s.reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  return -1;
}

// A new connection, in state kConnected.  The limits are enforced after a grace of 0.1 s (trim),
// when a scraper's request has arrived and is being answered; twice the total is the hard bound at
// once, where the address holding the most pays (never one holding fewer than the newcomer would).
void HttpServer::Loop::take(int cfd, const std::string& peer) {
  if (clients.size() >= 2 * s.limits_.max_connections && !make_room(peer)) {
    refuse(cfd, "too many connections");
    return;
  }
  setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer);
  setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &kReceiveBuffer, sizeof kReceiveBuffer);
  Client c;
  c.fd = cfd;
  c.peer = peer;
  c.started = Clock::now();
  c.deadline = after(s.limits_.request_timeout_s);  // ConnDeadline::kRequest
  if (s.tls_) {
    c.ssl = SSL_new(s.tls_->ctx);
    if (!c.ssl || SSL_set_fd(c.ssl, cfd) != 1) {
      if (c.ssl) SSL_free(c.ssl);
      ERR_clear_error();
      close(cfd);
      return;
    }
    SSL_set_accept_state(c.ssl);
  }
  ++per_peer[peer];
  clients.push_back(std::move(c));  // no events this round (poll_at SIZE_MAX)
}

// A connection that cannot be taken: 503 for HTTP (written once, never waited for), closed for TLS.
void HttpServer::Loop::refuse(int cfd, const char* why) {
  if (!s.tls_) {
    std::string t = format_response(plain_response(503, std::string(why) + "\n"), false, false);
    ssize_t ignored = send(cfd, t.data(), t.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
  close(cfd);
}

// One round of one connection: the transitions its state and what poll reported allow, in the
// order a request goes through them (a head that arrives is checked, admitted, answered and its
// first bytes written in the same round), then its state's deadline.  false: close it.
bool HttpServer::Loop::step(Client& c, short rev, Clock::time_point now) {
  if (state_row(c.state).hangup == Hangup::kPollRdhup && (rev & (POLLRDHUP | POLLHUP | POLLERR)))
    return false;  // waiting for its answer or its check: a client that hung up frees its place
  if ((c.state == ConnState::kConnected || c.state == ConnState::kReadingHead) && rev && !on_readable(c, now))
    return false;
  if (c.state == ConnState::kAuthWait && !on_auth_verdict(c, now)) return false;
  if (c.state == ConnState::kQueued) on_answer(c);
  if (c.state == ConnState::kWriting && (rev || c.sent == 0) && !on_writable(c, now)) return false;
  return !(state_row(c.state).deadline != ConnDeadline::kNone && now > c.deadline && on_deadline(c));
}

// Bytes (or a TLS record, or its close) came: all there is is read (TLS may hold a whole record
// decrypted).  A complete head goes on (on_head); a head past max_request_bytes is 431.
bool HttpServer::Loop::on_readable(Client& c, Clock::time_point now) {
  enter(c, ConnState::kReadingHead);
  char buf[4096];
  for (;;) {
    ssize_t got = io(c, false, buf, sizeof buf);
    if (got == 0 || got == -2) return false;
    if (got < 0) break;
    c.in.append(buf, static_cast<size_t>(got));
    if (c.in.size() > s.limits_.max_request_bytes + 4) break;
  }
  size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) end = c.in.find("\n\n");
  if (end != std::string::npos && end <= s.limits_.max_request_bytes) {
    on_head(c, parse_request_head(c.in.substr(0, end)), now);
  } else if (c.in.size() > s.limits_.max_request_bytes) {
    answer(c, plain_response(431, "request head larger than " + std::to_string(s.limits_.max_request_bytes) + " bytes\n"));
  }
  return true;
}

// The head is in: refused (400, 405, 505), or its credentials checked (kAuthWait), or admitted.
void HttpServer::Loop::on_head(Client& c, const ParsedHead& p, Clock::time_point now) {
  c.gzip = p.accept_gzip;
  c.req = {p.method, p.path, now, p.scrape_timeout_s, p.accept_gzip};
  if (p.refuse) {
    answer(c, plain_response(p.refuse, std::string(http_reason(p.refuse)) + "\n"));
  } else if (s.auth_) {
    c.authorization = p.authorization;
    enter(c, ConnState::kAuthWait);  // decided by on_auth_verdict, from memory or by the checking thread
  } else {
    admit(c);
  }
}

// The credential check's answer, asked each round: admitted, 401, 503 (too many checks waiting),
// or still pending (503 past the state's deadline).
bool HttpServer::Loop::on_auth_verdict(Client& c, Clock::time_point now) {
  switch (s.auth_->check(c.authorization, c.peer)) {
    case BasicAuth::Verdict::kAllowed: admit(c); break;
    case BasicAuth::Verdict::kDenied: {
      HttpResponse r = plain_response(401, "Unauthorized\n");
      r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"gpumap\"");
      answer(c, r);
      break;
    }
    case BasicAuth::Verdict::kBusy:
      answer(c, plain_response(503, "too many credential checks at once from this address (limit " +
                                        std::to_string(BasicAuth::kMaxQueued) + ")\n"));
      break;
    case BasicAuth::Verdict::kPending:
      if (now > c.deadline) return !on_deadline(c);
      break;
  }
  return true;
}

// A request allowed in: counted against max_requests (kQueued), or answered 503 past it.
void HttpServer::Loop::admit(Client& c) {
  if (s.limits_.max_requests && requests >= s.limits_.max_requests) {
    answer(c, plain_response(503, "too many requests at once (limit " + std::to_string(s.limits_.max_requests) + ")\n"));
  } else {
    enter(c, ConnState::kQueued);
  }
}

// The handler, asked each round until it has the answer.
void HttpServer::Loop::on_answer(Client& c) {
  if (std::optional<HttpResponse> r = handler(c.req)) answer(c, *r);
}

void HttpServer::Loop::answer(Client& c, const HttpResponse& r) {
  c.out = response_pieces(r, c.req.method == "HEAD", c.gzip);
  c.piece = c.offset = 0;
  c.shares = c.req.method == "HEAD" ? nullptr : r.shared.get();
  c.answered = Clock::now();
  c.want_read = c.want_write = false;
  // The answer is made: its slot among the requests being answered is free for anyone's next
  // request (enter).  A client that does not read holds its own connection only (issue 46, item 9).
  enter(c, ConnState::kWriting);
  c.progressed = Clock::now();
}

// The socket (or TLS) takes more of the answer, piece by piece, as much as it takes now; false
// when it failed or the answer is all sent (Connection: close).  (TLS: a write that waits is
// asked again with the same bytes, as OpenSSL requires: the pieces never move.)
bool HttpServer::Loop::on_writable(Client& c, Clock::time_point now) {
  while (c.piece < c.out.size()) {
    const WirePiece& p = c.out[c.piece];
    ssize_t put = io(c, true, const_cast<char*>(p.data) + c.offset, p.size - c.offset);
    if (put == 0 || put == -2) return false;
    if (put < 0) return true;
    c.sent += static_cast<size_t>(put);
    c.offset += static_cast<size_t>(put);
    c.progressed = now;
    if (c.offset == p.size) {
      ++c.piece;
      c.offset = 0;
    }
  }
  return false;
}

// Past the deadline its state's row names: what the row says.  true: close it.
bool HttpServer::Loop::on_deadline(Client& c) {
  switch (state_row(c.state).on_deadline) {
    case OnDeadline::kNothing: return false;
    case OnDeadline::kAnswer408AndClose:
      if (!c.ssl) {  // too slow to send its head: say so once, without waiting for it to read
        std::string t = format_response(plain_response(408, "request not received in time\n"), false, false);
        ssize_t ignored = send(c.fd, t.data(), t.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
      }
      return true;
    case OnDeadline::kAnswer503: answer(c, plain_response(503, "the credential check did not finish in time\n")); return false;
    case OnDeadline::kClose: return true;
  }
  return true;
}

// The one place a connection changes state: what the rows say about leaving one and entering the
// next (its slot among max_requests, its deadline's clock).
void HttpServer::Loop::enter(Client& c, ConnState next) {
  if (state_row(c.state).counted) --requests;
  if (c.state == ConnState::kAuthWait && next != ConnState::kAuthWait) c.authorization.clear();
  c.state = next;
  const ConnStateRow& row = state_row(next);
  if (row.counted) ++requests;
  if (row.deadline == ConnDeadline::kWrite) c.deadline = after(s.limits_.write_timeout_s);
}

// Reads or writes through TLS or the socket: > 0 bytes, 0 the peer closed, -1 not now, -2 failed.
ssize_t HttpServer::Loop::io(Client& c, bool write, char* buf, size_t n) {
  if (!c.ssl) {
    ssize_t r = write ? send(c.fd, buf, n, MSG_NOSIGNAL) : recv(c.fd, buf, n, 0);
    if (r >= 0) return r;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
  }
  ERR_clear_error();
  int r = write ? SSL_write(c.ssl, buf, static_cast<int>(n)) : SSL_read(c.ssl, buf, static_cast<int>(n));
  c.want_read = c.want_write = false;
  if (r > 0) return r;
  switch (SSL_get_error(c.ssl, r)) {
    case SSL_ERROR_WANT_READ: c.want_read = true; return -1;
    case SSL_ERROR_WANT_WRITE: c.want_write = true; return -1;
    case SSL_ERROR_ZERO_RETURN: return 0;
    default: ERR_clear_error(); return -2;
  }
}

HttpServer::Loop::It HttpServer::Loop::drop(It it) {
  if (it->ssl) {
    SSL_shutdown(it->ssl);  // one close_notify, not waited for
    SSL_free(it->ssl);
    ERR_clear_error();
  }
  close(it->fd);
  if (state_row(it->state).counted) --requests;
  if (--per_peer[it->peer] == 0) per_peer.erase(it->peer);
  return clients.erase(it);
}

// A connection closed to make room, of `peer`: the one that costs the most and promises the least,
// by its state's eviction rank (the rows): one that has sent nothing (no byte heard, none waiting
// to be read); one still sending its head, whatever it sent (a byte, part of a TLS hello: speaking
// buys nothing); an answer stuck behind a full window for kStalledS (the client reads nothing); any
// other answer being written (its request was served).  Oldest first within each: a scraper's
// connection, new and with its request on its way, is the last of its kind.  A request waiting for
// its answer or its credential check is never closed (max_requests and BasicAuth bound those).
HttpServer::Loop::It HttpServer::Loop::victim(const std::string& peer, double min_age_s) {
  auto now = Clock::now();
  auto best = clients.end();
  int best_rank = 4;
  for (auto it = clients.begin(); it != clients.end(); ++it) {
    const Client& c = *it;
    const ConnStateRow& row = state_row(c.state);
    if (c.peer != peer || row.rank == kNeverEvicted) continue;
    if (std::chrono::duration<double>(now - c.started).count() < min_age_s) continue;
    bool waiting = false, stalled = false;
    if (row.when == RankCase::kBytesWaiting) {
      char b;
      waiting = !(recv(c.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    } else if (row.when == RankCase::kStalled) {
      stalled = std::chrono::duration<double>(now - c.progressed).count() >= kStalledS;
    }
    int rank = eviction_rank(c.state, waiting, stalled);
    if (rank < best_rank) {  // (the list is in order of arrival: the first of a rank is its oldest)
      best = it;
      best_rank = rank;
      if (rank == 0) break;
    }
  }
  return best;
}

bool HttpServer::Loop::evict_from(const std::string& peer, double min_age_s) {
  auto v = victim(peer, min_age_s);
  if (v == clients.end()) return false;
  drop(v);
  return true;
}

// Room in all for a connection of `newcomer` ("" when not known yet, or to trim): taken from the
// address that holds the most, never from one that holds fewer than the newcomer would, nor
// (newcomer "") from one holding a single connection: a scraper alone on its address always finds
// room and keeps it; an address holding many pays for its own.
bool HttpServer::Loop::make_room(const std::string& newcomer, double min_age_s) {
  size_t mine = newcomer.empty() ? 1 : per_peer.count(newcomer) ? per_peer[newcomer] : 0;
  std::vector<std::pair<size_t, std::string>> order;
  for (const auto& [p, n] : per_peer) order.emplace_back(n, p);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [n, p] : order) {
    if (n < mine + 1 && p != newcomer) continue;
    if (evict_from(p, min_age_s)) return true;
  }
  return false;
}

// Over a limit, past their grace of 0.1 s: every connection counts, whatever it sent (issue 46,
// item 1: one that had sent a byte was kept until a second old, and 130 that reconnected held the
// hard bound).  An address over its own limit pays; over the total, the one holding most.
void HttpServer::Loop::trim() {
  for (auto p = per_peer.begin(); p != per_peer.end();) {
    std::string peer = p->first;
    size_t over = p->second > s.limits_.max_per_peer ? p->second - s.limits_.max_per_peer : 0;
    ++p;  // (evicting the last one erases its entry)
    while (over-- > 0 && evict_from(peer, kGraceS)) {
    }
  }
  while (clients.size() > s.limits_.max_connections && make_room("", kGraceS)) {
  }
  bound_held_bodies();
}

// The shared bodies held by connections writing them: at most kHeldBodies; past it, each
// connection writing the oldest is closed (the one whose first answer was made first).  So slow
// readers hold at most kHeldBodies frames whatever the cache period and the write timeout.
void HttpServer::Loop::bound_held_bodies() {
  for (;;) {
    std::map<const SharedBody*, Clock::time_point> held;  // -> its first answer still being written
    for (const Client& c : clients)
      if (c.state == ConnState::kWriting && c.shares) {
        auto [at, fresh] = held.emplace(c.shares, c.answered);
        if (!fresh) at->second = std::min(at->second, c.answered);
      }
    if (held.size() <= kHeldBodies) return;
    auto oldest = std::min_element(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    for (auto it = clients.begin(); it != clients.end();)
      it = it->state == ConnState::kWriting && it->shares == oldest->first ? drop(it) : std::next(it);
  }
}

}  // namespace gpumap
