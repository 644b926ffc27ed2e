#include "findings/fail_on.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace gpumap {
namespace {

TEST(FailOn, TakesWarningAndErrorAndNamesTheCommandOfABadValue) {
  EXPECT_EQ(parse_fail_on_severity("ps", std::nullopt), std::nullopt);
  EXPECT_EQ(parse_fail_on_severity("ps", std::string("warning")), std::optional<Severity>(Severity::kWarning));
  EXPECT_EQ(parse_fail_on_severity("fleet", std::string("error")), std::optional<Severity>(Severity::kError));
  for (const char* bad : {"info", "", "Error", "warning,error"}) {
    try {
      parse_fail_on_severity("fleet", std::string(bad));
      ADD_FAILURE() << "took `" << bad << "`";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_EQ(std::string(e.what()), std::string("fleet: --fail-on `") + bad + "` is not a severity it takes");
      EXPECT_EQ(e.hint(), "--fail-on warning (a warning or an error fails) or --fail-on error");
    }
  }
  try {  // a control character is shown escaped, not sent to the terminal
    parse_fail_on_severity("ps", std::string("\x1b[2J"));
    ADD_FAILURE() << "took an escape sequence";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpumap
