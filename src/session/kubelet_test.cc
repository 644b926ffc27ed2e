// ask_kubelet (session/kubelet.h) in process: every way the kubelet's pod-resources reader
// (gpumap-kubelet, Seams::kubelet_helper) can fail is an answer naming why, never an exception,
// and nothing is taken from a reader that failed.  The reader here is a shell script standing in
// for gpumap-kubelet; tests/kube/ has the real one against a real gRPC server.  Kept black-box in
// tests/cli_pods_test.cc: `gpumap pods` exiting 1 and saying it once when the reader fails.
#include "session/kubelet.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "fake_session.h"

namespace gpumap {
namespace {

/// Seams whose kubelet socket exists (the reader is not run when it does not) and whose reader
/// is `script` (none when empty).
Seams with_reader(const std::string& dir, const std::string& script) {
  Seams s;
  s.kubelet_socket = dir + "/kubelet.sock";
  std::ofstream(s.kubelet_socket) << "";
  if (!script.empty()) {
    s.kubelet_helper = dir + "/gpumap-kubelet";
    std::ofstream(s.kubelet_helper) << "#!/bin/sh\n" << script << "\n";
    chmod(s.kubelet_helper.c_str(), 0755);
  }
  return s;
}

TEST(AskKubelet, NoSocketIsAbsentAndNoReaderIsNotBuilt) {
  testing::FakeSession f("h200x2");
  Seams s;
  s.kubelet_socket = f.dir() + "/no-such.sock";
  s.kubelet_helper = "/bin/false";  // not run: the socket's absence is the plainest answer
  KubeletReply a = ask_kubelet(s);
  EXPECT_EQ(a.code, "absent");
  EXPECT_NE(a.error.find("no pod-resources socket at " + s.kubelet_socket), std::string::npos) << a.error;
  EXPECT_FALSE(a.pods);
  KubeletReply n = ask_kubelet(with_reader(f.dir(), ""));
  EXPECT_EQ(n.code, "not-built");
  EXPECT_NE(n.error.find("no gpumap-kubelet beside it"), std::string::npos) << n.error;
  EXPECT_FALSE(n.pods);
}

TEST(AskKubelet, AReaderThatHangsFailsOrAnswersGarbageIsSaid) {
  struct Case {
    std::string script, code, says;
  };
  for (const Case& c : std::vector<Case>{
           {"sleep 30", "helper-failed", "did not finish in 3 s"},
           {"echo 'cannot load libgrpc++.so.1.51' >&2; exit 127", "helper-failed",
            "failed (exit 127): cannot load libgrpc++.so.1.51"},
           {"echo 'not json'", "helper-failed", "answered something else than its JSON"},
           {"echo '{\"socket\": \"s\", \"pods\": 7}'", "helper-failed", "no pods list"},
           // Its own error document (exit 1): passed on with its code.
           {"echo '{\"socket\": \"s\", \"error\": {\"code\": \"denied\", \"message\": \"the socket is root'\"'\"'s\"}}'; exit 1",
            "denied", "the socket is root's"},
       }) {
    testing::FakeSession f("h200x2");
    KubeletReply a = ask_kubelet(with_reader(f.dir(), c.script));
    EXPECT_EQ(a.code, c.code) << c.script;
    EXPECT_NE(a.error.find(c.says), std::string::npos) << c.script << ": " << a.error;
    EXPECT_FALSE(a.pods) << c.script << ": nothing taken from a reader that failed";
  }
}

TEST(AskKubelet, TheReadersDocumentIsTheAnswer) {
  testing::FakeSession f("h200x2");
  KubeletReply a = ask_kubelet(with_reader(
      f.dir(), "echo '{\"socket\": \"s\", \"pods\": [{\"name\": \"train\", \"namespace\": \"ml\", \"containers\": "
               "[{\"name\": \"c\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-1\"]}]}]}]}'"));
  EXPECT_EQ(a.code, "");
  ASSERT_TRUE(a.pods) << a.error;
  ASSERT_EQ(a.pods->pods.size(), 1u);
  EXPECT_EQ(a.pods->pods[0].name, "train");
  EXPECT_EQ(a.pods->pods[0].ns, "ml");
  ASSERT_EQ(a.pods->pods[0].containers.size(), 1u);
  EXPECT_EQ(a.pods->pods[0].containers[0].devices.at(0).ids, std::vector<std::string>{"GPU-1"});
}

}  // namespace
}  // namespace gpumap
