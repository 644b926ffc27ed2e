// answer_map in process (tests/fake_session.h): every field of the answer `gpumap map`, its
// JSON and its log line are written from, including the failure answers.
#include "session/map.h"

#include <fstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeSession;

using testing::code_of;

TEST(AnswerMap, BadRequestsAreUsageErrorsAndAMissingOrdinalSaysWhichExist) {
  FakeSession f("h200x2");
  Session& s = f.session();
  EXPECT_EQ(code_of([&] { answer_map(s, s.env(), {.probe = true, .check = true}); }), kExitUsage);
  EXPECT_EQ(code_of([&] { answer_map(s, s.env(), {.asked = {"gpu1"}}); }), kExitUsage);
  try {
    answer_map(s, s.env(), {.asked = {"cuda:2"}});
    ADD_FAILURE() << "cuda:2 answered on a 2-GPU host";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("cuda:2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpumap
