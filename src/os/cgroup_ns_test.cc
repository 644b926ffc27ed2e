#include "os/cgroup_ns.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

TEST(CgroupNs, RelativePathsAreMadeAbsoluteFromTheNamespacesRoot) {
  EXPECT_EQ(cgroup_path_ups("/kubepods.slice/x"), 0u);
  EXPECT_EQ(cgroup_path_ups("/../../b"), 2u);
  EXPECT_EQ(cgroup_path_ups("/.."), 1u);
  EXPECT_EQ(cgroup_path_ups("/..x/b"), 0u);
  EXPECT_EQ(absolute_cgroup_path("/../../b", "/k/a/x"), "/k/b");
  EXPECT_EQ(absolute_cgroup_path("/../../../kubepods-besteffort.slice/p.slice/c.scope",
                                 "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podG.slice/cri-containerd-G.scope"),
            "/kubepods.slice/kubepods-besteffort.slice/p.slice/c.scope");  // three up from the container: kubepods.slice
  EXPECT_EQ(absolute_cgroup_path("/", "/k/a"), "/k/a");          // gpumap's own namespace root
  EXPECT_EQ(absolute_cgroup_path("/x/y", "/"), "/x/y");          // the host's namespace: as it is
  EXPECT_EQ(absolute_cgroup_path("/../..", "/k/a"), "/");
  EXPECT_EQ(absolute_cgroup_path("/../../..", "/k/a"), std::nullopt);  // above the hierarchy's root
  EXPECT_EQ(absolute_cgroup_path("/b/../c", "/k"), std::nullopt);     // ".." after a name: not what the kernel writes
  EXPECT_EQ(absolute_cgroup_path("b", "/k"), std::nullopt);
}

TEST(CgroupNs, ANamespaceRootThatCannotBeFoundGivesNoOwners) {
  // A cgroup tree that is not there: no root, and a relative path's owners are unknown (so its
  // pod is unverified, env/pod_cgroup.h), never guessed.
  EXPECT_TRUE(cgroup_path_owners("/nonexistent/cgroup", "/proc", "", "/../../kubepods.slice/x").empty());
}

}  // namespace
}  // namespace gpumap
