// container-sees-more-gpus on simulated hosts (issue 52 item 3): a host file's `container` object
// puts gpumap inside a container of that host; explain() (doctor's findings) judges what NVML lists
// against what the container was given, and pasting the fix leaves nothing to warn about.
#include <gtest/gtest.h>

#include "fake_session.h"
#include "session/container_facts.h"
#include "session/explain.h"

namespace gpumap {
namespace {

using testing::FakeSession;

const char* kGpu3 = "GPU-51407aa5-38b8-c808-42b4-b5e1f1d82031";  // dgx8's nvidia-smi GPU 3

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

std::string dump(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) out += "\n  " + f.id + ": " + f.message + " | fix: " + f.fix;
  return out;
}

// The fix as a shell line, its trailing comment dropped: NAME=VALUE.
std::string assignment(const std::string& fix) {
  std::string line = fix.substr(0, fix.find("  #"));
  return line.substr(std::string("export ").size());
}

TEST(ContainerSeesMore, PrivilegedSeesEveryGpuNotTheOneItWasGiven) {
  FakeSession f("dgx8", {"NVIDIA_VISIBLE_DEVICES=3"});
  f.host()["container"] = {{"privileged", true}};
  Session& s = f.session();
  ASSERT_TRUE(s.in_container());
  ASSERT_TRUE(container_facts_of(s).has_value());
  Explanation e = explain(s, s.env(), false);
  const Finding* more = find(e.findings, "container-sees-more-gpus");
  ASSERT_NE(more, nullptr) << dump(e.findings);
  EXPECT_EQ(more->severity, Severity::kWarning);
  EXPECT_NE(more->message.find("NVML lists 8 GPUs"), std::string::npos) << more->message;
  EXPECT_NE(more->message.find("privileged"), std::string::npos) << more->message;
  EXPECT_NE(more->note.find("drop --privileged"), std::string::npos) << more->note;
  // Never the claim that only the injected GPUs exist.
  EXPECT_EQ(find(e.findings, "container-renumbered"), nullptr) << dump(e.findings);
  for (const Finding& x : e.findings) EXPECT_EQ(x.message.find("only the injected"), std::string::npos) << x.message;
  // Pasted, the process is on its own GPU and nothing is left to warn about.
  ASSERT_EQ(assignment(more->fix), std::string("CUDA_VISIBLE_DEVICES=") + kGpu3);
  Session pasted = f.other({"NVIDIA_VISIBLE_DEVICES=3", assignment(more->fix)});
  Explanation after = explain(pasted, pasted.env(), false);
  for (const Finding& x : after.findings) EXPECT_EQ(x.severity, Severity::kInfo) << dump(after.findings);
  ASSERT_EQ(after.mapping.view.uuids.size(), 1u);
  EXPECT_EQ(after.mapping.view.uuids[0], kGpu3);
}

TEST(ContainerSeesMore, KubeletAllocationWithAHostPathDev) {
  // CDI (GPU Operator v25.10's default): NVIDIA_VISIBLE_DEVICES=void inside; the kubelet gave GPU 1,
  // a hostPath /dev brings every node, the cgroup v2 rules cannot be read.
  FakeSession f("dgx8", {"NVIDIA_VISIBLE_DEVICES=void", "KUBERNETES_SERVICE_HOST=10.96.0.1"});
  f.host()["container"] = {{"given", {"GPU-0c95b2ce-637c-abcd-1bd9-c0caf1726bb6"}},
                           {"given_by", "the kubelet's allocation"},
                           {"dev_nodes", {0, 1, 2, 3, 4, 5, 6, 7}},
                           {"device_cgroup", "v2"}};
  Session& s = f.session();
  Explanation e = explain(s, s.env(), false);
  const Finding* more = find(e.findings, "container-sees-more-gpus");
  ASSERT_NE(more, nullptr) << dump(e.findings);
  EXPECT_NE(more->message.find("the kubelet's allocation gave it"), std::string::npos) << more->message;
  EXPECT_NE(more->message.find("hostPath /dev"), std::string::npos) << more->message;
  EXPECT_NE(more->note.find("nvidia.com/gpu"), std::string::npos) << more->note;
  EXPECT_NE(more->note.find("accept-nvidia-visible-devices-envvar-when-unprivileged"), std::string::npos) << more->note;
}

TEST(ContainerSeesMore, AnImagesAllInAPodThatAskedForNone) {
  FakeSession f("dgx8", {"NVIDIA_VISIBLE_DEVICES=all", "KUBERNETES_SERVICE_HOST=10.96.0.1"});
  f.host()["container"] = {{"privileged", false}};
  Session& s = f.session();
  Explanation e = explain(s, s.env(), false);
  const Finding* more = find(e.findings, "container-sees-more-gpus");
  ASSERT_NE(more, nullptr) << dump(e.findings);
  EXPECT_NE(more->message.find("image or the pod spec"), std::string::npos) << more->message;
  EXPECT_TRUE(more->fix.empty());  // what it was given is not known here: no line to paste
  EXPECT_NE(more->note.find("deviceListStrategy"), std::string::npos) << more->note;
}

TEST(ContainerSeesMore, AContainerGivenWhatItSeesIsQuiet) {
  FakeSession f("dgx8", {"NVIDIA_VISIBLE_DEVICES=void"});
  f.host()["container"] = {{"given", {0, 1, 2, 3, 4, 5, 6, 7}}};
  Session& s = f.session();
  Explanation e = explain(s, s.env(), false);
  EXPECT_EQ(find(e.findings, "container-sees-more-gpus"), nullptr) << dump(e.findings);
  // A simulated host without the object stays bare metal.
  FakeSession bare("dgx8", {"NVIDIA_VISIBLE_DEVICES=3"});
  EXPECT_FALSE(bare.session().in_container());
  EXPECT_FALSE(container_facts_of(bare.session()).has_value());
}

}  // namespace
}  // namespace gpumap
