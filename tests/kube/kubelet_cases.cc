// gpumap-kubelet against a real gRPC server speaking the kubelet's pod-resources API v1 on a Unix
// socket (tests/kube/fake_kubelet.cc): device ids as the NVIDIA device plugin gives them (UUIDs,
// indices, MIG, time-sliced replicas), DRA's CDI devices, an older kubelet without
// GetAllocatableResources, and every way the socket can fail.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "cli_helpers.h"
#include "formats/pod_resources.h"
#include "kube/fake_kubelet_server.h"

namespace gpumap::testing {
namespace {

PodResources node() {
  PodResources r;
  r.pods = {
      {"train-0", "ml", {{"trainer", {{"nvidia.com/gpu", {"GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab"}}}, {}},
                         {"sidecar", {}, {}}}},
      {"infer-7f9c", "serving", {{"vllm", {{"nvidia.com/gpu", {"1"}}}, {}}}},  // DEVICE_ID_STRATEGY=index
      {"notebook", "alice", {{"jupyter", {{"nvidia.com/gpu", {"GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a::1"}}}, {}}}},
      {"mig-job", "ml", {{"main", {{"nvidia.com/mig-1g.10gb", {"MIG-0bd9d8b3-8c4b-5c5d-9a2e-1f0e2d3c4b5a"}}}, {}}}},
      {"dra-pod", "ml", {{"main", {}, {"nvidia.com/gpu=GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab"}}}},
  };
  r.allocatable = std::vector<PodDevices>{
      {"nvidia.com/gpu", {"GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab", "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a"}}};
  return r;
}

TEST(Kubelet, EveryPodItsContainersAndTheirDevicesAsTheDevicePluginNamesThem) {
  PodResources want = node();
  FakeKubelet k(want);
  // The node's CDI spec folder (a test folder): read beside the kubelet's answer.
  std::string tmpl = ::testing::TempDir() + "cdi-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  std::ofstream(tmpl + "/nvidia.yaml") << "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n"
                                          "    deviceNodes:\n    - path: /dev/nvidia0\n";
  CliRun r = run_program({GPUMAP_KUBELET_BINARY, "--socket", k.socket(), "--timeout", "10", "--cdi-dirs",
                          "/nonexistent-cdi:" + tmpl});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  PodResourcesRead got = parse_pod_resources(r.out);
  ASSERT_TRUE(got.answer) << r.out;
  want.socket = k.socket();
  want.cdi.dirs = {"/nonexistent-cdi", tmpl};
  want.cdi.devices = {{"nvidia.com/gpu=0", {"/dev/nvidia0"}, tmpl + "/nvidia.yaml"}};
  EXPECT_EQ(dump(pod_resources_json(*got.answer)), dump(pod_resources_json(want)));  // every field round-trips
  // No folder: none read.  A relative folder: refused (the runtimes' folders are absolute).
  CliRun none = run_program({GPUMAP_KUBELET_BINARY, "--socket", k.socket(), "--cdi-dirs", ""});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_TRUE(parse_pod_resources(none.out).answer->cdi.dirs.empty());
  CliRun relative = run_program({GPUMAP_KUBELET_BINARY, "--socket", k.socket(), "--cdi-dirs", "etc/cdi"});
  EXPECT_EQ(relative.code, 2);
  EXPECT_NE(relative.err.find("--cdi-dirs: etc/cdi is not an absolute path"), std::string::npos) << relative.err;
}

TEST(Kubelet, AnOlderKubeletWithoutAllocatableStillListsThePods) {
  PodResources want = node();
  want.allocatable.reset();
  FakeKubelet k(want);
  CliRun r = run_program({GPUMAP_KUBELET_BINARY, "--socket", k.socket()});
  ASSERT_EQ(r.code, 0) << r.err;
  PodResourcesRead got = parse_pod_resources(r.out);
  ASSERT_TRUE(got.answer);
  EXPECT_FALSE(got.answer->allocatable);
  EXPECT_EQ(got.answer->pods.size(), 5u);
}

TEST(Kubelet, ASlowKubeletIsADeadlineNotAHang) {
  FakeKubelet k(node(), 1500);
  auto start = std::chrono::steady_clock::now();
  CliRun r = run_program({GPUMAP_KUBELET_BINARY, "--socket", k.socket(), "--timeout", "0.3"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(r.code, 1);
  PodResourcesRead got = parse_pod_resources(r.out);
  ASSERT_TRUE(got.error) << r.out;
  EXPECT_EQ(got.error->code, "deadline");
}

TEST(Kubelet, AMissingSocketADeadOneAndOneThatSpeaksSomethingElseAreSaid) {
  std::string dir = temp_dir("kubelet");
  CliRun r = run_program({GPUMAP_KUBELET_BINARY, "--socket", dir + "/kubelet.sock"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(parse_pod_resources(r.out).error->code, "absent") << r.out;
  r = run_program({GPUMAP_KUBELET_BINARY, "--socket", dir});  // a folder
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(parse_pod_resources(r.out).error->code, "failed") << r.out;
  // A socket nobody listens on any more, and one whose server answers garbage.
  char tmp[] = "/tmp/gpumap-kubelet-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmp));
  std::string path = std::string(tmp) + "/s";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  std::thread garbage([fd] {
    for (int i = 0; i < 8; ++i) {
      int c = accept(fd, nullptr, nullptr);
      if (c < 0) return;
      const char junk[] = "HTTP/1.0 200 OK\r\n\r\nthis is not gRPC\n";
      [[maybe_unused]] ssize_t n = write(c, junk, sizeof junk - 1);
      close(c);
    }
  });
  r = run_program({GPUMAP_KUBELET_BINARY, "--socket", path, "--timeout", "2"});
  EXPECT_EQ(r.code, 1);
  PodResourcesRead got = parse_pod_resources(r.out);
  ASSERT_TRUE(got.error) << r.out;
  EXPECT_TRUE(got.error->code == "unavailable" || got.error->code == "deadline" || got.error->code == "failed")
      << got.error->code;
  shutdown(fd, SHUT_RDWR);
  close(fd);
  garbage.join();
  r = run_program({GPUMAP_KUBELET_BINARY, "--socket", path, "--timeout", "2"});  // nobody listens
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(parse_pod_resources(r.out).error) << r.out;
  std::filesystem::remove_all(tmp);
  EXPECT_EQ(run_program({GPUMAP_KUBELET_BINARY, "--timeout", "x"}).code, 2);
  EXPECT_EQ(run_program({GPUMAP_KUBELET_BINARY, "--bogus"}).code, 2);
}

}  // namespace
}  // namespace gpumap::testing
