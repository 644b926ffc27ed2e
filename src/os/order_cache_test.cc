#include "os/order_cache.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// A cache file nested a million levels deep (not one gpumap wrote) is dropped, not copied:
// copying and writing such an entry back recursed once per level and overflowed the stack.
TEST(OrderCache, DeeplyNestedFileIsStartedAfresh) {
  OrderCacheKey key{"boot-1", "580.159.04", "FASTEST_FIRST", {"GPU-b", "GPU-a"}};
  std::string dir = fresh_dir();
  size_t depth = 1000000;
  {
    std::ofstream f(dir + "/cuda-order-v1.json");
    f << R"({"entries": [{"key": "other", "boot_id": "boot-1", "deep": )" << std::string(depth, '[')
      << std::string(depth, ']') << "}]}";
  }
  EXPECT_FALSE(cache_lookup(dir, key));
  cache_store(dir, key, {"GPU-a", "GPU-b"});
  ASSERT_TRUE(cache_lookup(dir, key));
  EXPECT_EQ(*cache_lookup(dir, key), (std::vector<std::string>{"GPU-a", "GPU-b"}));
  std::ifstream in(dir + "/cuda-order-v1.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("deep"), std::string::npos) << "the foreign entry was kept";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpumap
