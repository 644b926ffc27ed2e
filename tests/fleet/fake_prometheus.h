// A Prometheus query API on 127.0.0.1 for the black-box tests of `gpumap fleet`: a thread that
// answers each fleet query (unfiltered) from a FleetSeries over real HTTP, until destroyed.
#pragma once
#include <atomic>
#include <string>
#include <thread>

#include "prom/fleet_join.h"

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

}  // namespace gpumap::testing
