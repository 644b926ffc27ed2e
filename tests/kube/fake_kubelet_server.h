// A fake kubelet for tests: tests/kube/fake_kubelet.cc, a real gRPC server speaking the kubelet's
// pod-resources API v1 on a Unix socket, started with the answers to give and stopped by pid.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "formats/pod_resources.h"

namespace gpumap::testing {

/// fake_kubelet serving `answers` on a socket in a fresh /tmp folder (a socket path must stay
/// short); stopped by pid and the folder removed on destruction.
class FakeKubelet {
 public:
  explicit FakeKubelet(const PodResources& answers, int delay_ms = 0) {
    char dir[] = "/tmp/gpumap-kubelet-XXXXXX";
    EXPECT_TRUE(mkdtemp(dir));
    dir_ = dir;
    socket_ = dir_ + "/kubelet.sock";
    std::ofstream(dir_ + "/answers.json") << dump(pod_resources_json(answers));
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      execl(GPUMAP_FAKE_KUBELET, "fake_kubelet", socket_.c_str(), (dir_ + "/answers.json").c_str(),
            std::to_string(delay_ms).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    char buf[16] = {};
    ssize_t n = read(out[0], buf, sizeof buf - 1);  // "ready" once it listens
    close(out[0]);
    EXPECT_GT(n, 0) << "fake_kubelet did not start";
  }
  ~FakeKubelet() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& socket() const { return socket_; }

 private:
  std::string dir_, socket_;
  pid_t pid_ = -1;
};

}  // namespace gpumap::testing
