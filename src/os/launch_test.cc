#include "os/launch.h"

#include <signal.h>

#include <gtest/gtest.h>

extern char** environ;

namespace gpumap {
namespace {

TEST(RunLaunch, CpuListsParseAndFormat) {
  auto c = parse_cpu_list("0-3,8,10-11\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(format_cpu_list(*c), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5, 1, 2, 3}), "1-3,5");
  std::string err;
  EXPECT_FALSE(parse_cpu_list("0-", &err));
  EXPECT_NE(err.find("`0-`"), std::string::npos);
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_EQ(parse_cpu_list("")->size(), 0u);
}

TEST(RunLaunch, CpusNearIntersectsWithTheInheritedSet) {
  std::string why;
  EXPECT_EQ(cpus_near({std::string("0-7"), std::string("16-23")}, {4, 5, 6, 16, 30}, &why),
            (std::vector<int>{4, 5, 6, 16}));
  EXPECT_TRUE(cpus_near({std::nullopt}, {0, 1}, &why).empty());
  EXPECT_NE(why.find("unknown"), std::string::npos);
  EXPECT_TRUE(cpus_near({std::string("8-9")}, {0, 1}, &why).empty());
  EXPECT_NE(why.find("do not overlap"), std::string::npos);
  EXPECT_FALSE(current_affinity().empty());
}

TEST(RunLaunch, ExitCodesAndExecFailure) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  EXPECT_EQ(launch_and_wait({{"sh", "-c", "exit 7"}, env, {}, {}, {}}).exit_code, 7);
  LaunchResult k = launch_and_wait({{"sh", "-c", "kill -TERM $$"}, env, {}, {}, {}});
  EXPECT_EQ(k.exit_code, 143);
  EXPECT_EQ(k.term_signal, 15);
  struct sigaction ign{}, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &ign, &old);  // inherited "ignore children" must not lose the status
  EXPECT_EQ(launch_and_wait({{"sh", "-c", "exit 5"}, env, {}, {}, {}}).exit_code, 5);
  sigaction(SIGCHLD, &old, nullptr);
  LaunchResult m = launch_and_wait({{"gpumap-no-such-program"}, env, {}, {}, {}});
  EXPECT_EQ(m.exit_code, 127);
  EXPECT_NE(m.exec_error.find("gpumap-no-such-program"), std::string::npos);
}

}  // namespace
}  // namespace gpumap
