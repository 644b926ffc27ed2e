#include "session/kubelet_cache.h"

#include <gtest/gtest.h>

namespace gpumap {
namespace {

// A kubelet that answers (or fails) as told, and a clock the test moves.
struct World {
  double t = 1000;
  bool fail = false;
  KubeletCache cache{[this](const Seams&) {
                       KubeletReply r;
                       if (fail) r.code = "unavailable", r.error = "nothing answers";
                       else r.pods = PodResources{};
                       return r;
                     },
                     [this] { return t; }};
  Seams seams;
  /// One frame: its pods, and which of them the answer named.
  KubeletReply frame(const std::set<std::string>& uids, const std::set<std::string>& named) {
    KubeletReply r = cache.reply(seams, uids);
    cache.seen(uids, named);
    return r;
  }
};

TEST(KubeletCache, OneAnswerServesEveryFrameWhileThePodsStayTheSame) {
  World w;
  w.frame({"a", "b"}, {"a", "b"});
  for (int i = 0; i < 30; ++i, w.t += 1) w.frame({"a", "b"}, {"a", "b"});
  EXPECT_EQ(w.cache.asked(), 1) << "30 frames at 1 s: one process start, not 30";
  w.frame({"a"}, {"a"});  // a pod left: nothing new to name
  EXPECT_EQ(w.cache.asked(), 1);
  w.t += KubeletCache::kMaxAgeSeconds;
  w.frame({"a"}, {"a"});
  EXPECT_EQ(w.cache.asked(), 2) << "asked again after a minute whatever happens";
}

TEST(KubeletCache, ANewPodIsAskedAtOnceAnUnnamedOneEveryTenSeconds) {
  World w;
  w.frame({"a"}, {"a"});
  w.t += 1;
  w.frame({"a", "new"}, {"a"});  // the answer came before the pod: not named
  EXPECT_EQ(w.cache.asked(), 2) << "a pod the last frame did not have";
  for (int i = 0; i < 5; ++i, w.t += 1) w.frame({"a", "new"}, {"a"});
  EXPECT_EQ(w.cache.asked(), 2) << "still unnamed, but asked less than 10 s ago";
  w.t += KubeletCache::kRetrySeconds;
  w.frame({"a", "new"}, {"a", "new"});
  EXPECT_EQ(w.cache.asked(), 3);
  w.t += 1;
  w.frame({"a", "new"}, {"a", "new"});
  EXPECT_EQ(w.cache.asked(), 3);
}

TEST(KubeletCache, AFailureIsKeptTenSecondsThenAskedAgain) {
  World w;
  w.fail = true;
  EXPECT_FALSE(w.frame({"a"}, {}).pods);
  w.fail = false;
  w.t += 2;
  EXPECT_EQ(w.frame({"a"}, {}).code, "unavailable") << "said, not re-asked every frame";
  w.t += KubeletCache::kRetrySeconds;
  EXPECT_TRUE(w.frame({"a"}, {"a"}).pods);
  EXPECT_EQ(w.cache.asked(), 2);
}

}  // namespace
}  // namespace gpumap
