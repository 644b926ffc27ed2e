// verify_gpus in process: the answer `verify --expect` renders, on FakeSession hosts.
#include "session/verify.h"

#include <map>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "findings/fix_line.h"
#include "model/error.h"
#include "model/exit_codes.h"
#include "session/self.h"

namespace gpumap {
namespace {

using testing::FakeSession;

TEST(VerifyGpus, MatchMismatchWithTheFixThatRoundTripsAndACudaThatWouldFail) {
  FakeSession f("seed-mixed", {"CUDA_VISIBLE_DEVICES=0,1"});
  Session& s = f.session();
  VerifyAnswer v = verify_gpus(s, s.env(), {"0,1"}, false, false);
  EXPECT_EQ(v.code, kExitMismatch);  // FASTEST_FIRST: cuda:0 is the H100, nvidia-smi 1
  EXPECT_FALSE(v.differences.empty());
  ASSERT_FALSE(v.fix.empty());
  Environment fixed = s.env();
  for (const auto& [name, value] : v.fix) fixed.set(name, value);
  Session again = f.other({});
  EXPECT_EQ(verify_gpus(again, fixed, {"0,1"}, false, false).code, kExitOk);  // the fix gives exactly those
  Environment bad = s.env();
  bad.set("CUDA_DEVICE_ORDER", "FASTEST");
  VerifyAnswer b = verify_gpus(s, bad, {"0"}, false, false);
  EXPECT_EQ(b.code, kExitCudaWouldFail);
  ASSERT_FALSE(b.fix.empty());
  EXPECT_EQ(b.fix.front(), (std::pair<std::string, std::string>{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}));
  ASSERT_TRUE(b.refusal);  // the words the library reports, the same answer the CLI renders
  EXPECT_EQ(b.refusal->hint, "set " + assignments_line(b.fix) + " before CUDA starts (or run under `gpumap run`)");
  EXPECT_THROW(verify_gpus(s, s.env(), {"9"}, false, false), Error);  // names no GPU: a usage error
}

TEST(VerifyGpus, PrefixChecksOnlyTheFirstOrdinals) {
  FakeSession f("h200x2");
  Session& s = f.session();
  EXPECT_EQ(verify_gpus(s, s.env(), {"0"}, true, false).code, kExitOk);
  EXPECT_EQ(verify_gpus(s, s.env(), {"0"}, false, false).code, kExitMismatch);  // it sees two
}

}  // namespace
}  // namespace gpumap
