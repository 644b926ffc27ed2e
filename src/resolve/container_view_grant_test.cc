// container_grant and cgroup_allowed_minors (issue 52 item 3): what a container can open against
// what it was given.
#include <gtest/gtest.h>

#include "resolve/container_view.h"

namespace gpumap {
namespace {

const char* kU[4] = {"GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111",
                     "GPU-22222222-2222-2222-2222-222222222222", "GPU-33333333-3333-3333-3333-333333333333"};

Snapshot four() {
  Snapshot s;
  for (uint32_t i = 0; i < 4; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = kU[i];
    g.minor_number = i;
    s.gpus.push_back(g);
  }
  return s;
}

TEST(ContainerGrant, CgroupRules) {
  EXPECT_FALSE(cgroup_allowed_minors({"a *:* rwm"}).has_value());
  EXPECT_FALSE(cgroup_allowed_minors({"c 1:3 rwm", "c 195:* rw"}).has_value());
  EXPECT_FALSE(cgroup_allowed_minors({"c *:* m", "b *:* m"}).has_value());
  auto some = cgroup_allowed_minors({"c 1:3 rwm", "c 195:255 rw", "c 195:254 rw", "c 195:2 rw", "b 195:3 rw", "c 195:0 rw"});
  ASSERT_TRUE(some.has_value());
  EXPECT_EQ(*some, (std::vector<uint32_t>{0, 2}));
  EXPECT_TRUE(cgroup_allowed_minors({}).value().empty());
}

TEST(ContainerGrant, PrivilegedWithTheVariableNamingOneGpu) {
  ContainerFacts f;
  f.privileged = true;
  f.dev_nodes = std::vector<uint32_t>{0, 1, 2, 3};
  f.cgroup = DeviceCgroup::kV1;
  f.device_rules = {"a *:* rwm"};
  ContainerGrant g = container_grant(four(), f, Environment::from_strings({"NVIDIA_VISIBLE_DEVICES=2"}));
  ASSERT_TRUE(g.given.has_value());
  EXPECT_EQ(*g.given, std::vector<std::string>{kU[2]});
  EXPECT_EQ(g.extra, (std::vector<std::string>{kU[0], kU[1], kU[3]}));
  EXPECT_TRUE(g.privileged);
  EXPECT_TRUE(g.cgroup_allows_all);
  EXPECT_TRUE(g.extra_nodes);
  EXPECT_TRUE(g.sees_more());
}

TEST(ContainerGrant, InjectedOnlyIsNotMore) {
  // NVIDIA_VISIBLE_DEVICES=2,3 and NVML lists two GPUs (renumbered): the runtime narrowed it.
  Snapshot s = four();
  s.gpus.resize(2);
  ContainerFacts f;
  f.privileged = false;
  f.dev_nodes = std::vector<uint32_t>{2, 3};
  ContainerGrant g = container_grant(s, f, Environment::from_strings({"NVIDIA_VISIBLE_DEVICES=2,3"}));
  EXPECT_FALSE(g.given.has_value());
  EXPECT_FALSE(g.sees_more());
  // CDI: void inside, the nodes injected: nothing to compare with, nothing said.
  EXPECT_FALSE(container_grant(s, f, Environment::from_strings({"NVIDIA_VISIBLE_DEVICES=void"})).sees_more());
  EXPECT_FALSE(container_grant(s, f, Environment::from_strings({})).sees_more());
}

TEST(ContainerGrant, HostPathDevWithAnAllocation) {
  ContainerFacts f;
  f.privileged = false;
  f.dev_nodes = std::vector<uint32_t>{0, 1, 2, 3};
  f.cgroup = DeviceCgroup::kV2;
  f.given = std::vector<std::string>{kU[1]};
  f.given_by = "the kubelet's allocation";
  ContainerGrant g = container_grant(four(), f, Environment::from_strings({"NVIDIA_VISIBLE_DEVICES=void"}));
  EXPECT_EQ(g.given_by, "the kubelet's allocation");
  EXPECT_EQ(g.extra.size(), 3u);
  EXPECT_TRUE(g.extra_nodes);
  EXPECT_FALSE(g.privileged);
  EXPECT_TRUE(g.sees_more());
}

TEST(ContainerGrant, PodEnvvarNotFromThePlugin) {
  ContainerFacts f;
  f.privileged = false;
  Environment all = Environment::from_strings({"KUBERNETES_SERVICE_HOST=10.0.0.1", "NVIDIA_VISIBLE_DEVICES=all"});
  EXPECT_TRUE(container_grant(four(), f, all).envvar_not_from_plugin);
  EXPECT_TRUE(container_grant(four(), f, all).sees_more());
  // The plugin's own envvar strategy writes UUIDs: not flagged.
  Environment plugin = Environment::from_strings({"KUBERNETES_SERVICE_HOST=10.0.0.1", std::string("NVIDIA_VISIBLE_DEVICES=") + kU[0]});
  Snapshot one = four();
  one.gpus.resize(1);
  EXPECT_FALSE(container_grant(one, f, plugin).sees_more());
  // The same `all` outside Kubernetes (docker run with the CUDA image's default) is what was asked.
  EXPECT_FALSE(container_grant(four(), f, Environment::from_strings({"NVIDIA_VISIBLE_DEVICES=all"})).sees_more());
}

TEST(ContainerGrant, NoneGivesNothing) {
  ContainerFacts f;
  f.privileged = true;
  ContainerGrant g = container_grant(four(), f, Environment::from_strings({"NVIDIA_VISIBLE_DEVICES=none"}));
  ASSERT_TRUE(g.given.has_value());
  EXPECT_TRUE(g.given->empty());
  EXPECT_EQ(g.extra.size(), 4u);
}

TEST(ContainerGrant, PrivilegedOnOneGpuIsNotMore) {
  Snapshot s = four();
  s.gpus.resize(1);
  ContainerFacts f;
  f.privileged = true;
  EXPECT_FALSE(container_grant(s, f, Environment::from_strings({})).sees_more());
  EXPECT_TRUE(container_grant(four(), f, Environment::from_strings({})).sees_more());
}

}  // namespace
}  // namespace gpumap
