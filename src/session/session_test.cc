#include "session/session.h"

#include <gtest/gtest.h>

#include <fstream>

#include "os/container.h"
#include "fake_session.h"

namespace gpumap {
namespace {

TEST(SeamsFromEnvironment, ReadsEachVariableOnce) {
  Environment env = Environment::from_strings({"GPUMAP_SIMULATE=h200x2", "GPUMAP_HOSTS_DIR=/h", "GPUMAP_SIM_LIBDIR=/s",
                                               "GPUMAP_LOCK_DIR=/l", "GPUMAP_CACHE_DIR=/c", "HOME=/home/u"});
  Seams s = seams_from_environment(env, "/opt/gpumap/bin");
  EXPECT_EQ(s.simulate, "h200x2");
  ASSERT_EQ(s.hosts_dirs.size(), 3u);
  EXPECT_EQ(s.hosts_dirs[0], "/h");
  EXPECT_EQ(s.hosts_dirs[1], "/opt/gpumap/bin/hosts");
  EXPECT_EQ(s.sim_lib_dirs, std::vector<std::string>{"/s"});
  EXPECT_EQ(s.lock_dir, "/l");
  EXPECT_EQ(s.cache_dir, "/c");
  EXPECT_TRUE(s.probe_command.empty());  // the caller's to choose
}

TEST(SeamsFromEnvironment, TestSeamsAndContainerOverride) {
  Environment env = Environment::from_strings({"GPUMAP_PROC_ROOT=/fixture/proc", "GPUMAP_SYSFS_ROOT=/fixture/sys",
                                               "GPUMAP_NVML_PID_NS=pid:[1]", "GPUMAP_IN_CONTAINER=1", "GPUMAP_TRACE=1"});
  Seams s = seams_from_environment(env, "/b");
  EXPECT_EQ(s.proc_root, "/fixture/proc");
  EXPECT_EQ(s.sysfs_root, "/fixture/sys");
  EXPECT_EQ(s.nvml_pid_ns, "pid:[1]");
  EXPECT_TRUE(s.in_container);
  EXPECT_TRUE(s.trace);
  Seams plain = seams_from_environment(Environment::from_strings({"GPUMAP_IN_CONTAINER=0", "container=podman"}), "/b");
  EXPECT_FALSE(plain.in_container);  // the override wins over $container
  EXPECT_EQ(plain.proc_root, "/proc");
  EXPECT_EQ(plain.sysfs_root, "/sys");
  EXPECT_FALSE(plain.nvml_pid_ns);
  EXPECT_FALSE(plain.trace);
  if (!container_files_present()) {  // on a host without /.dockerenv, $container decides
    EXPECT_TRUE(seams_from_environment(Environment::from_strings({"container=podman"}), "/b").in_container);
  }
}

TEST(SeamsFromEnvironment, DefaultsAndTheSimulateOption) {
  Seams s = seams_from_environment(Environment::from_strings({"GPUMAP_SIMULATE=", "HOME=/home/u"}), "/b", "mig");
  EXPECT_EQ(s.simulate, "mig");  // --simulate wins over the variable
  EXPECT_EQ(s.sim_lib_dirs, (std::vector<std::string>{"/b/sim", "/b/../lib/gpumap/sim"}));
  EXPECT_EQ(s.cache_dir, "/home/u/.cache/gpumap");
  EXPECT_EQ(s.lock_dir, "");
  EXPECT_FALSE(seams_from_environment(Environment::from_strings({"GPUMAP_SIMULATE="}), "/b").simulate);
  EXPECT_EQ(seams_from_environment(Environment::from_strings({"XDG_CACHE_HOME=/x", "HOME=/h"}), "/b").cache_dir, "/x/gpumap");
  EXPECT_EQ(seams_from_environment(Environment(), "/b").cache_dir, "");
}

TEST(StateDirFrom, RootUsesVarLibOthersTheirXdgStateFolder) {
  Environment both = Environment::from_strings({"XDG_STATE_HOME=/xdg/state", "HOME=/home/u"});
  EXPECT_EQ(state_dir_from(both, true), "/var/lib/gpumap");
  EXPECT_EQ(state_dir_from(both, false), "/xdg/state/gpumap");
  EXPECT_EQ(state_dir_from(Environment::from_strings({"XDG_STATE_HOME=", "HOME=/home/u"}), false),
            "/home/u/.local/state/gpumap");
  Environment set = Environment::from_strings({"GPUMAP_STATE_DIR=/elsewhere", "HOME=/home/u"});
  EXPECT_EQ(state_dir_from(set, true), "/elsewhere");
  EXPECT_EQ(state_dir_from(set, false), "/elsewhere");
  EXPECT_EQ(state_dir_from(Environment(), false), "");
  EXPECT_EQ(seams_from_environment(set, "/b").state_dir, "/elsewhere");
}

// Issue 43: an unusable cache folder was ignored in silence (every run then paid cuInit again).
// It is said once per run however many sessions (watch frames, top's reader) and lookups meet it,
// never on a host whose order needs no cache, and `doctor`'s finding says it instead.
TEST(SessionCache, AnUnusableCacheFolderIsSaidOncePerRun) {
  testing::FakeSession mixed("seed-mixed");  // FASTEST_FIRST on mixed models: the order is cached
  std::string file = mixed.dir() + "/not-a-folder";
  std::ofstream(file) << "x";
  mixed.seams().cache_dir = file;
  mixed.seams().notices = std::make_shared<RunNotices>();
  mixed.session().mapping();
  mixed.session().mapping(mixed.session().env(), false, true);
  Session frame = mixed.other({});
  frame.mapping();
  std::vector<std::string> said = mixed.seams().notices->take();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].rfind("gpumap: the cache folder " + file + " is a regular file, not a folder, so the driver's", 0), 0u)
      << said[0];
  EXPECT_NE(said[0].find("Fix: export GPUMAP_CACHE_DIR="), std::string::npos) << said[0];
  frame.mapping();
  EXPECT_TRUE(mixed.seams().notices->take().empty()) << "said twice in one run";

  std::optional<Finding> f = cache_finding(frame);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "cache-unusable");
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find(file + " is a regular file"), std::string::npos) << f->message;
  EXPECT_NE(f->note.find("GPUMAP_CACHE_DIR"), std::string::npos) << f->note;

  testing::FakeSession same("h200x2");  // identical GPUs: NVML gives the order, the cache is never used
  same.seams().cache_dir = file;
  same.seams().notices = std::make_shared<RunNotices>();
  same.session().mapping();
  EXPECT_TRUE(same.seams().notices->take().empty());

  testing::FakeSession fine("seed-mixed");
  fine.seams().notices = std::make_shared<RunNotices>();
  fine.session().mapping();
  EXPECT_TRUE(fine.seams().notices->take().empty());
  EXPECT_FALSE(cache_finding(fine.session()));
}

}  // namespace
}  // namespace gpumap
