// The renderings (output/) of `which` answers, in process: the tests of
// src/session/which_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
#include "session/which.h"

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"
#include "output/which_view.h"

namespace gpumap {
namespace {

/// The refusal `gpumap which` ends with (code and message), or {0, the text} for an answer.
std::pair<int, std::string> which_on(testing::FakeSession& f, const std::vector<std::string>& specs) {
  Session& s = f.session();
  try {
    return {0, which_text(which_gpus(s, s.env(), specs), TermStyle{})};
  } catch (const Error& e) {
    return {e.exit_code(), std::string(e.what()) + "\n  hint: " + e.hint()};
  }
}

TEST(WhichGpus, TheLinesToPasteForTwoGpusInReverseOrder) {
  testing::FakeSession f("h200x2");
  auto [code, text] = which_on(f, {"1", "0"});
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("  export CUDA_VISIBLE_DEVICES=GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a,GPU-ef612c2c-"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,0\n"), std::string::npos) << text;
}

// Moved from the black-box tests/cli_small_test.cc: refusals, each with its words and example.
TEST(WhichGpus, NoGpuOrAGpuNamedTwiceIsAUsageError) {
  testing::FakeSession f("h200x2");
  auto [none, why] = which_on(f, {});
  EXPECT_EQ(none, kExitUsage);
  EXPECT_NE(why.find("which needs at least one GPU"), std::string::npos) << why;
  EXPECT_NE(why.find("gpumap which 2 3"), std::string::npos) << why;
  auto [twice, said] = which_on(f, {"1", "GPU-a04764cc"});
  EXPECT_EQ(twice, kExitUsage);
  EXPECT_NE(said.find("named twice"), std::string::npos) << said;
}

}  // namespace
}  // namespace gpumap
