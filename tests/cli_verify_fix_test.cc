// Black-box: `gpumap verify` names the CUDA_VISIBLE_DEVICES value that fixes a mismatch, and
// pasting the printed value makes it exit 0.  The fixes for CUDA failing, an invalid order and MIG
// device UUIDs, in process: src/session/verify_test.cc (VerifyFix).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

CliRun verify(std::vector<std::string> args, const std::vector<std::string>& env, const std::string& host) {
  args.insert(args.begin(), "verify");
  args.push_back("--simulate");
  args.push_back(host);
  return gpumap_here(args, env);
}

TEST(CliVerifyFix, PastingTheFixMakesVerifyPass) {
  // seed-mixed under FASTEST_FIRST: cuda:0 is nvidia-smi GPU 1, so expecting 0,2 in order fails.
  CliRun r = verify({"--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=0,2"}, "seed-mixed");
  ASSERT_EQ(r.code, 4) << r.out << r.err;
  std::string tag = "fix (before CUDA starts): export CUDA_VISIBLE_DEVICES=";
  size_t at = r.out.find(tag);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string value = r.out.substr(at + tag.size(), r.out.find('\n', at) - at - tag.size());
  CliRun j = verify({"--json", "--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=0,2"}, "seed-mixed");
  EXPECT_EQ(json::parse(j.out)["fix"]["CUDA_VISIBLE_DEVICES"], value);
  CliRun pasted = verify({"--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=" + value}, "seed-mixed");
  EXPECT_EQ(pasted.code, 0) << pasted.out << pasted.err;
  EXPECT_TRUE(json::parse(verify({"--json", "--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=" + value}, "seed-mixed").out)["fix"]
                  .is_null());
}

}  // namespace
}  // namespace gpumap::testing
