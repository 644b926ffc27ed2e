// `gpumap fleet` as a script runs it: the URL from the flag or $GPUMAP_PROMETHEUS, the exit codes
// (Prometheus unreachable: 1 naming the URL; no URL: 2; --fail-on: 7), against a query API served
// from memory over real HTTP (tests/fleet/fake_prometheus.h).  The whole chain with real daemons:
// tests/fleet/fleet_test.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cli_helpers.h"
#include "fleet/fake_prometheus.h"
#include "fleet/fleet_fixture.h"

namespace gpumap::testing {
namespace {

/// A port on 127.0.0.1 that nothing listens on (bound, then closed).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(CliFleet, ShowsTheFleetAndFailsOnWhatItWasAskedTo) {
  FakePrometheusServer prometheus(three_node_fleet());
  CliRun r = gpumap({"fleet", "--prometheus", prometheus.url()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("3 nodes (1 down), 4 GPUs, 5 GPU processes, 1 Slurm job"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("job 77: 4 ranks on 2 nodes (node-a, node-b)"), std::string::npos) << r.out;
  // eight at once (six, the info findings counted by id, the processes counted), then, being
  // few, every process
  EXPECT_EQ(prometheus.requests(), 9);
  CliRun f = gpumap({"fleet", "--fail-on", "error"}, {"GPUMAP_PROMETHEUS=" + prometheus.url()});
  EXPECT_EQ(f.code, 7) << f.err;
}

TEST(CliFleet, PrometheusUnreachableIsExit1NamingTheUrl) {
  std::string url = "http://127.0.0.1:" + std::to_string(closed_port());
  CliRun r = gpumap({"fleet", "--prometheus", url});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("gpumap: error: Prometheus at " + url + " refused the connection"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: is Prometheus running?"), std::string::npos) << r.err;
  CliRun j = gpumap({"fleet", "--json", "--prometheus", url});
  EXPECT_EQ(j.code, 1);
  EXPECT_NE(j.out.find("\"code\": 1"), std::string::npos) << j.out;
}

TEST(CliFleet, NoUrlOrABadOneIsAUsageError) {
  CliRun r = gpumap({"fleet"}, {"GPUMAP_PROMETHEUS="});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("$GPUMAP_PROMETHEUS"), std::string::npos) << r.err;
  CliRun b = gpumap({"fleet", "--prometheus", "http://user:secret@prom:9090"});
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("--http.config.file"), std::string::npos) << b.err;
}

}  // namespace
}  // namespace gpumap::testing
