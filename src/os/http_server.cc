#include "os/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <list>

#include "model/error.h"

namespace gpumap {
namespace {

using Clock = std::chrono::steady_clock;

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

std::string format_response(const HttpResponse& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (r.status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

HttpResponse plain(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  return r;
}

struct Client {
  int fd = -1;
  std::string in, out;
  size_t sent = 0;
  bool parsed = false;   // the head is complete: waiting for the handler or writing
  bool writing = false;  // `out` holds the answer
  HttpRequest req;
  Clock::time_point deadline;
};

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

std::pair<std::string, uint16_t> parse_listen_address(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error(kExitUsage, "--listen " + text + ": " + why,
                 "give HOST:PORT, e.g. --listen 127.0.0.1:9467 (loopback), --listen 0.0.0.0:9467 (every IPv4 address), "
                 "--listen [::1]:9467");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad("no HOST:PORT");
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']') throw bad("an IPv6 address goes in brackets");
    host = host.substr(1, host.size() - 2);
    in6_addr a6;
    if (inet_pton(AF_INET6, host.c_str(), &a6) != 1) throw bad("`" + host + "` is not an IPv6 address");
  } else if (host != "localhost") {
    in_addr a4;
    if (inet_pton(AF_INET, host.c_str(), &a4) != 1) throw bad("`" + host + "` is not an IPv4 address (or localhost, or [IPv6])");
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    throw bad("the port must be a number from 0 to 65535");
  return {host, static_cast<uint16_t>(std::stoul(port))};
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a4;
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

ParsedHead parse_request_head(const std::string& head) {
  ParsedHead p;
  size_t eol = head.find('\n');
  std::string line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  size_t a = line.find(' '), b = a == std::string::npos ? a : line.find(' ', a + 1);
  if (a == std::string::npos || b == std::string::npos || line.find(' ', b + 1) != std::string::npos) {
    p.refuse = 400;
    return p;
  }
  p.method = line.substr(0, a);
  std::string target = line.substr(a + 1, b - a - 1), version = line.substr(b + 1);
  for (char c : p.method)
    if (c < 'A' || c > 'Z') p.refuse = 400;
  for (unsigned char c : target)
    if (c <= 0x20 || c >= 0x7f) p.refuse = 400;
  if (p.method.empty() || target.empty() || target[0] != '/') p.refuse = 400;
  if (p.refuse) return p;
  if (version.rfind("HTTP/", 0) != 0) {
    p.refuse = 400;
    return p;
  }
  if (version != "HTTP/1.0" && version != "HTTP/1.1") {
    p.refuse = 505;
    return p;
  }
  if (p.method != "GET" && p.method != "HEAD") {
    p.refuse = 405;
    return p;
  }
  p.path = target.substr(0, target.find('?'));
  return p;
}

HttpServer::HttpServer(const std::string& host, uint16_t port, HttpLimits limits) : limits_(limits) {
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
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) {
      fd_ = fd;
      sockaddr_storage ss = {};
      socklen_t len = sizeof ss;
      getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
      port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
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
  set_nonblocking(fd_);
}

HttpServer::~HttpServer() {
  if (fd_ >= 0) close(fd_);
}

void HttpServer::serve(const Handler& handler, const volatile sig_atomic_t* stop, int wake_fd) {
  std::list<Client> clients;
  auto answer = [&](Client& c, const HttpResponse& r) {
    c.out = format_response(r, c.req.method == "HEAD");
    c.writing = true;
    c.deadline = after(limits_.write_timeout_s);
  };
  while (!*stop) {
    std::vector<pollfd> fds;
    fds.push_back({fd_, POLLIN, 0});
    if (wake_fd >= 0) fds.push_back({wake_fd, POLLIN, 0});
    bool waiting = false;
    for (Client& c : clients) {
      short ev = c.writing ? POLLOUT : c.parsed ? 0 : POLLIN;
      waiting |= c.parsed && !c.writing;
      fds.push_back({c.fd, ev, 0});
    }
    int timeout_ms = waiting ? 50 : 200;  // a signal's flag is seen within 200 ms
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) throw Error(kExitError, std::string("poll: ") + std::strerror(errno));
    size_t k = 0;
    if (fds[k++].revents & POLLIN) {
      for (;;) {
        int cfd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) break;
        if (clients.size() >= limits_.max_clients) {  // too many at once: no queue to fill
          close(cfd);
          continue;
        }
        Client c;
        c.fd = cfd;
        c.deadline = after(limits_.request_timeout_s);
        clients.push_back(std::move(c));
        fds.push_back({cfd, 0, 0});  // no events this round
      }
    }
    if (wake_fd >= 0 && (fds[k++].revents & POLLIN)) {
      char buf[64];
      while (read(wake_fd, buf, sizeof buf) > 0) {
      }
    }
    auto now = Clock::now();
    for (auto it = clients.begin(); it != clients.end(); ++k) {
      Client& c = *it;
      short rev = k < fds.size() ? fds[k].revents : 0;
      bool drop = false;
      if (!c.parsed && (rev & (POLLIN | POLLHUP | POLLERR))) {
        char buf[4096];
        ssize_t got = recv(c.fd, buf, sizeof buf, 0);
        if (got <= 0) drop = got == 0 || (errno != EAGAIN && errno != EINTR);
        else c.in.append(buf, static_cast<size_t>(got));
        size_t end = c.in.find("\r\n\r\n");
        if (end == std::string::npos) end = c.in.find("\n\n");
        if (!drop && end != std::string::npos && end <= limits_.max_request_bytes) {
          ParsedHead p = parse_request_head(c.in.substr(0, end));
          c.parsed = true;
          c.req = {p.method, p.path, now};
          if (p.refuse) answer(c, plain(p.refuse, std::string(reason(p.refuse)) + "\n"));
        } else if (!drop && c.in.size() > limits_.max_request_bytes) {
          c.parsed = true;
          answer(c, plain(431, "request head larger than " + std::to_string(limits_.max_request_bytes) + " bytes\n"));
        }
      }
      if (!drop && c.parsed && !c.writing) {
        if (std::optional<HttpResponse> r = handler(c.req)) answer(c, *r);
      }
      if (!drop && c.writing && (rev & POLLOUT)) {
        ssize_t put = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (put < 0 && errno != EAGAIN && errno != EINTR) drop = true;
        if (put > 0) c.sent += static_cast<size_t>(put);
        if (c.sent == c.out.size()) drop = true;  // done: Connection: close
      }
      if (!drop && !(c.parsed && !c.writing) && now > c.deadline) {
        if (!c.parsed) {  // too slow to send its head: say so once, without waiting for it to read
          std::string t = format_response(plain(408, "request not received in time\n"), false);
          ssize_t ignored = send(c.fd, t.data(), t.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          (void)ignored;
        }
        drop = true;
      }
      if (drop) {
        close(c.fd);
        it = clients.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Client& c : clients) close(c.fd);
}

}  // namespace gpumap
