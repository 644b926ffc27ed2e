#include "fleet/fake_prometheus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fleet/fleet_fixture.h"

namespace gpumap::testing {

FakePrometheusServer::FakePrometheusServer(FleetSeries series, std::string before)
    : series_(std::move(series)), before_(std::move(before)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 16) != 0 ||
      ::pipe(stop_pipe_) != 0)
    throw std::runtime_error("fake Prometheus: cannot listen");
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { loop(); });
}

FakePrometheusServer::~FakePrometheusServer() {
  (void)!::write(stop_pipe_[1], "x", 1);
  thread_.join();
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

void FakePrometheusServer::loop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) continue;
    if (p[1].revents) return;
    int c = ::accept(listen_fd_, nullptr, nullptr);
    if (c < 0) continue;
    answer(c);
    ::close(c);
  }
}

void FakePrometheusServer::answer(int fd) {
  std::string req;
  char buf[8192];
  while (req.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  ++requests_;
  const size_t head_end = req.find("\r\n\r\n") + 4;
  const std::string head_in = req.substr(0, head_end);
  {
    std::lock_guard<std::mutex> lock(m_);
    heads_.push_back(head_in);
  }
  const bool post = req.rfind("POST ", 0) == 0;
  size_t sp = req.find(' ');
  std::string target = req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1);
  std::string form;  // a POST's body, by its Content-Length
  if (post) {
    size_t at = head_in.find("Content-Length: ");
    size_t want = at == std::string::npos ? 0 : std::stoul(head_in.substr(at + 16));
    form = req.substr(head_end);
    while (form.size() < want) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return;
      form.append(buf, static_cast<size_t>(n));
    }
  }
  std::optional<PromResult> r;
  std::string status = "400 Bad Request";
  std::string body = R"({"status":"error","errorType":"bad_data","error":"unexpected query"})";
  if (post && refuse_post) {
    status = "405 Method Not Allowed";
    body = "";
  } else if ((r = answer_fleet_query(series_, filter, query_of(post ? form : target)))) {
    status = "200 OK";
    body = prom_body(*r);
  }
  std::string head = "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n";
  std::string all = before_ + head + body;
  size_t off = 0;
  while (off < all.size()) {
    ssize_t n = ::write(fd, all.data() + off, all.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

namespace {

/// A listening socket on 127.0.0.1 (its port into `port`).
int listen_loopback(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0)
    throw std::runtime_error("hostile Prometheus: cannot listen");
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

}  // namespace

HostilePrometheusServer::HostilePrometheusServer(Answer answer) : answer_(std::move(answer)) {
  listen_fd_ = listen_loopback(port_);
  if (::pipe(stop_pipe_) != 0) throw std::runtime_error("hostile Prometheus: pipe");
  thread_ = std::thread([this] {
    for (;;) {
      pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) continue;
      if (p[1].revents) return;
      int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::lock_guard<std::mutex> lock(m_);
      connections_.emplace_back([this, c] {
        std::string req;
        char buf[8192];
        while (req.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = ::read(c, buf, sizeof buf);
          if (n <= 0) break;
          req.append(buf, static_cast<size_t>(n));
        }
        if (req.find("\r\n\r\n") != std::string::npos) answer_(c, stop_);
        ::close(c);
      });
    }
  });
}

HostilePrometheusServer::~HostilePrometheusServer() {
  stop_ = true;
  (void)!::write(stop_pipe_[1], "x", 1);
  thread_.join();
  for (std::thread& t : connections_) t.join();
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

bool HostilePrometheusServer::send(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::vector<std::string> FakePrometheusServer::heads() const {
  std::lock_guard<std::mutex> lock(m_);
  return heads_;
}

HttpAnswer FakePrometheusTransport::post_form(const HttpUrl& url, const std::string& target, const std::string& form,
                                              double timeout_s) {
  if (refuse_post) {
    ++requests;
    methods.push_back("POST");
    urls.push_back(url.shown());
    targets.push_back(target + "?" + form);
    return {405, "Method Not Allowed", {}, ""};
  }
  HttpAnswer a = get(url, target + "?" + form, timeout_s);
  methods.back() = "POST";
  return a;
}

HttpAnswer FakePrometheusTransport::get(const HttpUrl& url, const std::string& target, double) {
  ++requests;
  methods.push_back("GET");
  urls.push_back(url.shown());
  targets.push_back(target);
  if (fail) throw HttpError(*fail, "simulated");
  if (status) return {*status, "Status", {}, body};
  if (std::optional<PromResult> r = answer_fleet_query(series_, filter, query_of(target), query_budget))
    return {200, "OK", {}, prom_body(*r)};
  return {400, "Bad Request", {}, R"({"status":"error","errorType":"bad_data","error":"unexpected query"})"};
}

}  // namespace gpumap::testing
