// The kubelet's and the runtimes' cgroup names, as written by real nodes (systemd and cgroupfs
// drivers, cgroup v1 and v2, kind's nested kubelet).
#include "env/pod_cgroup.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

const std::string kId = "4c1ae3b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081";
const std::string kUid = "5f8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
const std::string kUidSystemd = "5f8e2b1a_3c4d_4e5f_8a9b_0c1d2e3f4a5b";

TEST(PodCgroup, SystemdDriverCgroupV2EachQosClassAndRuntime) {
  struct Case {
    std::string text, qos, runtime;
  } cases[] = {
      {"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope\n",
       "burstable", "containerd"},
      {"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidSystemd + ".slice/crio-" + kId + ".scope\n",
       "besteffort", "cri-o"},
      {"0::/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/docker-" + kId + ".scope\n", "guaranteed", "docker"},
      // kind: a kubelet inside a container names its slices kubelet-kubepods-...
      {"0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" +
           kUidSystemd + ".slice/cri-containerd-" + kId + ".scope",
       "besteffort", "containerd"},
  };
  for (const Case& c : cases) {
    std::optional<PodCgroup> p = parse_pod_cgroup(c.text);
    ASSERT_TRUE(p) << c.text;
    EXPECT_EQ(p->pod_uid, kUid) << c.text;
    EXPECT_EQ(p->qos, c.qos) << c.text;
    EXPECT_EQ(p->container_id, kId) << c.text;
    EXPECT_EQ(p->runtime, c.runtime) << c.text;
  }
}

TEST(PodCgroup, CgroupfsDriverAndCgroupV1Lines) {
  std::string v1 = "12:pids:/kubepods/burstable/pod" + kUid + "/" + kId + "\n" +
                   "11:memory:/kubepods/burstable/pod" + kUid + "/" + kId + "\n" + "1:name=systemd:/kubepods/burstable/pod" +
                   kUid + "/" + kId + "\n";
  std::optional<PodCgroup> p = parse_pod_cgroup(v1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pod_uid, kUid);
  EXPECT_EQ(p->qos, "burstable");
  EXPECT_EQ(p->container_id, kId);
  EXPECT_EQ(p->runtime, "");  // cgroupfs names no runtime
  p = parse_pod_cgroup("0::/kubepods/pod" + kUid.substr(0, 8) + kUid.substr(8) + "/" + kId);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->qos, "guaranteed");
  // The pause container's or a pod-level process: the pod without a container.
  p = parse_pod_cgroup("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->container_id, "");
  // CRI-O's monitor process is not the container.
  p = parse_pod_cgroup("0::/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/crio-conmon-" + kId + ".scope");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->container_id, "");
  // Upper-case hex in a UID is read in its canonical lower-case form.
  p = parse_pod_cgroup("0::/kubepods/besteffort/pod5F8E2B1A-3C4D-4E5F-8A9B-0C1D2E3F4A5B/" + kId);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pod_uid, kUid);
}

TEST(PodCgroup, NotAPodIsNothing) {
  for (std::string t : {std::string("0::/user.slice/user-1000.slice/session-3.scope\n"), std::string("0::/\n"),
                        std::string(""), std::string("garbage"), std::string("0::/kubepods.slice\n"),
                        std::string("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podnot-a-uid.slice/x\n"),
                        "0::/kubepods/weird/pod" + kUid + "/" + kId + "\n",  // not a QoS class
                        "0::/system.slice/docker-" + kId + ".scope\n"})
    EXPECT_FALSE(parse_pod_cgroup(t)) << t;
}

TEST(ContainerCgroup, DockerAndPodmanOutsideKubernetes) {
  std::optional<ContainerCgroup> c = parse_container_cgroup("0::/system.slice/docker-" + kId + ".scope\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->runtime, "docker");
  EXPECT_EQ(c->id, kId);
  c = parse_container_cgroup("0::/machine.slice/libpod-" + kId + ".scope/container\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->runtime, "podman");
  c = parse_container_cgroup("12:memory:/docker/" + kId + "\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->runtime, "docker");
  EXPECT_FALSE(parse_container_cgroup("0::/user.slice/" + kId + "\n"));  // a bare ID elsewhere is not one
  EXPECT_FALSE(parse_container_cgroup("0::/kubepods/pod" + kUid + "/" + kId + "\n"));  // a pod's: parse_pod_cgroup
}


// Issue 46, item 7: only the kubelet's place in the hierarchy, in root's folders, names a pod.
TEST(PodCgroup, AUsersDelegatedTreeOrAFolderRootDidNotMakeIsNotThePod) {
  const std::string pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice";
  const std::string leaf = pod + "/cri-containerd-" + kId + ".scope";
  using Owners = std::vector<std::optional<uint32_t>>;
  Owners root(5, 0u);  // "", kubepods.slice, kubepods-burstable.slice, the pod's, the container's
  std::optional<PodCgroup> p = parse_pod_cgroup("0::" + leaf + "\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, leaf);
  EXPECT_EQ(p->pod_segment, 3u);
  EXPECT_EQ(pod_cgroup_untrusted(*p, leaf, root), "");
  // Issue 56 item 5: not found from here (a cgroup namespace of its own, as the DaemonSet ran):
  // the name decided, and a delegated folder named like a pod was the pod.  Unverified now.
  for (const Owners& unread : {Owners{}, Owners{0u, 0u, 0u}, Owners{0u, 0u, 0u, std::nullopt, 0u}, Owners{0u, 0u, 0u, 0u, std::nullopt}}) {
    std::string why = pod_cgroup_untrusted(*p, leaf, unread);
    EXPECT_NE(why.find("could not be read to check that root made it"), std::string::npos) << why;
    EXPECT_NE(why.find("mount the host's /sys/fs/cgroup"), std::string::npos) << why;
  }
  Owners unread_above = root;
  unread_above[1] = std::nullopt;  // above the pod's folder: not the kubelet's to prove
  EXPECT_EQ(pod_cgroup_untrusted(*p, leaf, unread_above), "");
  Owners user_pod = root;
  user_pod[3] = 1000u;
  EXPECT_EQ(pod_cgroup_untrusted(*p, leaf, user_pod), "its cgroup folder " + pod + " is owned by uid 1000, not root: only root makes the kubelet's folders");
  Owners user_leaf = root;
  user_leaf[4] = 1000u;
  EXPECT_NE(pod_cgroup_untrusted(*p, leaf, user_leaf).find("cri-containerd-" + kId + ".scope is owned by uid 1000"), std::string::npos);
  Owners user_above = root;
  user_above[1] = 1000u;  // above the pod's folder: a kind node's tree, say (root delegates it)
  EXPECT_EQ(pod_cgroup_untrusted(*p, leaf, user_above), "");
  EXPECT_NE(pod_cgroup_untrusted(*p, "/other", root).find("could not be read"), std::string::npos)
      << "the owners of another path say nothing of this one: unverified";
  // systemd's user trees (user@.service: rootless Podman, a user's own slices), whoever owns them.
  for (const char* prefix : {"/user.slice/user-1000.slice/user@1000.service", "/user.slice", "/../../user.slice/user-1000.slice"}) {
    std::optional<PodCgroup> u = parse_pod_cgroup("0::" + std::string(prefix) + leaf + "\n");
    ASSERT_TRUE(u) << prefix;
    std::string why = pod_cgroup_untrusted(*u, "", {});
    EXPECT_NE(why.find("a user's delegated cgroup tree, not the kubelet's"), std::string::npos) << prefix << ": " << why;
  }
  std::optional<PodCgroup> kind = parse_pod_cgroup("0::/system.slice/docker-" + kId + ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" + kUidSystemd + ".slice\n");
  ASSERT_TRUE(kind);
  EXPECT_EQ(pod_cgroup_untrusted(*kind, kind->path, Owners(7, 0u)), "") << "a kind node (root's container) nests a real kubelet";
}
}  // namespace
}  // namespace gpumap
