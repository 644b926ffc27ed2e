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

// Issue 43: an unusable cache folder was ignored in silence, and every run paid cuInit again.
// Each cause is named, with the folder, and a folder others could write is never read.
TEST(OrderCache, AnUnusableFolderIsNamedWithItsCause) {
  OrderCacheKey key{"boot-1", "580.159.04", "FASTEST_FIRST", {"GPU-b", "GPU-a"}};
  std::string base = fresh_dir();
  EXPECT_EQ(cache_dir_problem(base), "");
  EXPECT_EQ(cache_dir_problem(base + "/new"), "");             // made on first store
  ASSERT_EQ(mkdir((base + "/home").c_str(), 0700), 0);
  EXPECT_EQ(cache_dir_problem(base + "/home/.cache/gpumap"), "");  // and its parent (~/.cache)

  std::string file = base + "/a-file";
  std::ofstream(file) << "x";
  std::string why = cache_dir_problem(file);
  EXPECT_EQ(why, "the cache folder " + file + " is a regular file, not a folder");
  EXPECT_EQ(cache_store(file, key, {"GPU-a", "GPU-b"}), why);  // said by the store, not swallowed
  EXPECT_NE(cache_dir_fix(file, why).find("export GPUMAP_CACHE_DIR="), std::string::npos);

  std::string deep = base + "/a/b/c";
  EXPECT_EQ(cache_dir_problem(deep), "the cache folder " + deep + " cannot be made: " + base +
                                         "/a does not exist (gpumap makes the folder and its parent, never a tree)");
  EXPECT_NE(cache_store(deep, key, {"GPU-a", "GPU-b"}), "");
  EXPECT_FALSE(exists(base + "/a"));

  std::string shared = base + "/shared";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  EXPECT_EQ(cache_store(shared, key, {"GPU-a", "GPU-b"}), "");
  ASSERT_TRUE(cache_lookup(shared, key));
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  std::string problem;
  EXPECT_FALSE(cache_lookup(shared, key, &problem)) << "an order anyone could have written is trusted";
  EXPECT_EQ(problem, "the cache folder " + shared + " is writable by everyone: its orders could be planted");
  EXPECT_EQ(cache_dir_problem(shared), problem);
  EXPECT_EQ(cache_dir_fix(shared, problem).rfind("chmod 700 " + shared, 0), 0u);
  ASSERT_EQ(chmod(shared.c_str(), 0770), 0);
  EXPECT_NE(cache_dir_problem(shared).find("is writable by its group"), std::string::npos);

  if (geteuid() == 0) {  // another user's folder (root can make one)
    ASSERT_EQ(chmod(shared.c_str(), 0700), 0);
    ASSERT_EQ(chown(shared.c_str(), 65534, 65534), 0);
    EXPECT_EQ(cache_dir_problem(shared), "the cache folder " + shared +
                                             " belongs to uid 65534, not this user (uid 0): its orders could be planted");
    EXPECT_FALSE(cache_lookup(shared, key));
  }
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace gpumap
