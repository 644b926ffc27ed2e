// A Prometheus query API on 127.0.0.1 for the black-box tests of `gpumap fleet`: a thread that
// answers each fleet query (unfiltered) from a FleetSeries over real HTTP, until destroyed.
#pragma once
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "prom/fleet_join.h"
#include "prom/http_client.h"

namespace gpumap::testing {

class FakePrometheusServer {
 public:
  /// `before`: bytes written before each answer (an interim `HTTP/1.1 100 Continue`).
  explicit FakePrometheusServer(FleetSeries series, std::string before = "");
  ~FakePrometheusServer();
  FakePrometheusServer(const FakePrometheusServer&) = delete;
  FakePrometheusServer& operator=(const FakePrometheusServer&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  /// Each request's head as it came (request line and headers).
  std::vector<std::string> heads() const;
  /// Answer a POST 405 Method Not Allowed (a server or proxy that takes GET only).
  std::atomic<bool> refuse_post{false};
  /// The filter the queries were made with (set before the first request).
  FleetFilter filter;

 private:
  void loop();
  void answer(int fd);
  mutable std::mutex m_;
  std::vector<std::string> heads_;
  FleetSeries series_;
  std::string before_;
  int listen_fd_ = -1, stop_pipe_[2] = {-1, -1}, port_ = 0;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

/// A hostile "Prometheus" on 127.0.0.1 (issue 56): each connection on a thread of its own, its
/// request head read, then answered by `answer(fd, stop)` however it likes (an answer that never
/// ends, 20 MB of `[`, ...) until `stop` is set, when the server is destroyed.
class HostilePrometheusServer {
 public:
  using Answer = std::function<void(int fd, const std::atomic<bool>& stop)>;
  explicit HostilePrometheusServer(Answer answer);
  ~HostilePrometheusServer();
  HostilePrometheusServer(const HostilePrometheusServer&) = delete;
  HostilePrometheusServer& operator=(const HostilePrometheusServer&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Writes all of `bytes` to `fd`; false when the client has gone.
  static bool send(int fd, const std::string& bytes);

 private:
  Answer answer_;
  int listen_fd_ = -1, stop_pipe_[2] = {-1, -1}, port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex m_;
  std::vector<std::thread> connections_;
  std::thread thread_;
};

/// The same in memory, behind the HttpTransport seam (session/fleet.h's read_fleet(req, http,
/// now)): each fleet query asked with `filter` answered from a FleetSeries (the filter is not
/// applied: the join applies it again), or every request failing as `fail` says (Prometheus
/// stopped mid-session), or answered `status` with `body`.  Each request's URL and target kept.
class FakePrometheusTransport : public HttpTransport {
 public:
  explicit FakePrometheusTransport(FleetSeries series) : series_(std::move(series)) {}
  HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) override;
  /// A POST is kept as its target + "?" + its form (so query_of reads both alike), its method in `methods`.
  HttpAnswer post_form(const HttpUrl& url, const std::string& target, const std::string& form, double timeout_s) override;
  bool refuse_post = false;  // answer a POST 405, as a server that takes GET only
  size_t query_budget = 6144;  // the request's query_budget_bytes (to know a split query's parts)
  std::vector<std::string> methods;
  FleetFilter filter;
  std::optional<HttpFailure> fail;
  std::optional<int> status;
  std::string body;
  FleetSeries& series() { return series_; }
  int requests = 0;
  std::vector<std::string> urls, targets;

 private:
  FleetSeries series_;
};

}  // namespace gpumap::testing
