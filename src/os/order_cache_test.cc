#include "os/order_cache.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace gpumap {
namespace {

std::string fresh_dir() {
  std::string t = ::testing::TempDir() + "/gpumap-cache-XXXXXX";
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

TEST(OrderCache, CreatesTheFolderAndItsParentButNeverATree) {
  OrderCacheKey key{"boot-1", "580.159.04", "FASTEST_FIRST", {"GPU-b", "GPU-a"}};
  std::string base = fresh_dir();
  std::string xdg = base + "/home/.cache/gpumap";  // ~/.cache missing on a fresh account: made too
  ASSERT_EQ(mkdir((base + "/home").c_str(), 0700), 0);
  cache_store(xdg, key, {"GPU-a", "GPU-b"});
  ASSERT_TRUE(cache_lookup(xdg, key));
  EXPECT_EQ(*cache_lookup(xdg, key), (std::vector<std::string>{"GPU-a", "GPU-b"}));
  struct stat st;
  ASSERT_EQ(stat(xdg.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  std::string deep = base + "/a/b/c/d";  // GPUMAP_CACHE_DIR pointed anywhere: no tree appears
  cache_store(deep, key, {"GPU-a", "GPU-b"});
  EXPECT_FALSE(exists(base + "/a"));
  EXPECT_FALSE(cache_lookup(deep, key));
}

}  // namespace
}  // namespace gpumap
