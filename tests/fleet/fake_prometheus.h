// A Prometheus query API on 127.0.0.1 for the black-box tests of `gpumap fleet`: a thread that
// answers each fleet query (unfiltered) from a FleetSeries over real HTTP, until destroyed.
#pragma once
#include <atomic>
#include <string>
#include <thread>

#include "prom/fleet_join.h"
#include "prom/http_client.h"

namespace gpumap::testing {

class FakePrometheusServer {
 public:
  explicit FakePrometheusServer(FleetSeries series);
  ~FakePrometheusServer();
  FakePrometheusServer(const FakePrometheusServer&) = delete;
  FakePrometheusServer& operator=(const FakePrometheusServer&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }

 private:
  void loop();
  void answer(int fd);
  FleetSeries series_;
  int listen_fd_ = -1, stop_pipe_[2] = {-1, -1}, port_ = 0;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

/// The same in memory, behind the HttpTransport seam (session/fleet.h's read_fleet(req, http,
/// now)): each unfiltered fleet query answered from a FleetSeries, or every request failing as
/// `fail` says (Prometheus stopped mid-session).
class FakePrometheusTransport : public HttpTransport {
 public:
  explicit FakePrometheusTransport(FleetSeries series) : series_(std::move(series)) {}
  HttpAnswer get(const HttpUrl& url, const std::string& target, double timeout_s) override;
  std::optional<HttpFailure> fail;
  FleetSeries& series() { return series_; }
  int requests = 0;

 private:
  FleetSeries series_;
};

}  // namespace gpumap::testing
