// `top`'s signal key sends only to the process the frame showed (issue 46, item 6): a pid taken
// by another process since (another start time, another owner) gets a message and no signal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "os/proc.h"
#include "top/top_app.h"

namespace gpumap {
namespace {

// A real child that blocks SIGTERM and waits: a signal sent to it stays pending, so the test
// reads whether one was sent from /proc/PID/status (ShdPnd) instead of waiting for it to die.
struct BlockedChild {
  pid_t pid = -1;
  BlockedChild() {
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &old);  // inherited by the child at fork: blocked from its start
    pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  ~BlockedChild() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // Whether SIGTERM is pending for it (kill(2) and pidfd_send_signal queue it before returning).
  bool term_pending() const {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("ShdPnd:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1;
    ADD_FAILURE() << "no ShdPnd line for pid " << pid;
    return false;
  }
};

// A fixture /proc with one entry for `pid`: its owner, command and start time as given.
struct FakeProc {
  std::string root;
  FakeProc() {
    char t[] = "/tmp/gpumap-topsig-XXXXXX";
    root = mkdtemp(t);
  }
  ~FakeProc() { std::filesystem::remove_all(root); }
  void put(pid_t pid, uint32_t uid, int64_t start_ticks) const {
    std::string dir = root + "/" + std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/status") << "Name:\ttrain\nState:\tS (sleeping)\nPPid:\t1\nUid:\t" << uid << "\t" << uid << "\t" << uid
                                   << "\t" << uid << "\n";
    std::ofstream(dir + "/cmdline") << std::string("python\0train.py\0", 16);
    std::ostringstream stat;
    stat << pid << " (train) S 1";
    for (int field = 5; field <= 21; ++field) stat << " 0";
    stat << " " << start_ticks << " 0 0\n";
    std::ofstream(dir + "/stat") << stat.str();
  }
};

TopFrame frame_showing(const FakeProc& proc, pid_t pid, std::optional<uint32_t> uid, std::optional<int64_t> start) {
  TopFrame f;
  f.ps.proc_root = proc.root;
  ProcessRow r;
  r.pid = static_cast<uint32_t>(pid);
  r.local_pid = static_cast<uint32_t>(pid);
  r.uid = uid;
  r.command = "python train.py";
  r.start_ticks = start;
  f.ps.result.rows.push_back(r);
  return f;
}

TopAction term(pid_t pid) { return {TopAction::kSignal, static_cast<uint32_t>(pid), SIGTERM}; }

TEST(TopSignal, ReadsTheStartTimeWithTheProcess) {
  ProcProcess me = ProcFs().read(static_cast<uint32_t>(getpid()), false);
  ASSERT_TRUE(me.start_ticks);
  EXPECT_EQ(me.start_ticks, ProcFs().stat(static_cast<uint32_t>(getpid()))->start_ticks);
}

TEST(TopSignal, AReusedPidIsNotSignalled) {
  BlockedChild child;
  ASSERT_GT(child.pid, 0);
  FakeProc proc;
  const uint32_t uid = getuid();
  // The pid was taken by a process with the same command line that started later.
  proc.put(child.pid, uid, 2000);
  std::string said = signal_shown_process(frame_showing(proc, child.pid, uid, 1000), term(child.pid));
  EXPECT_NE(said.find("is another process now"), std::string::npos) << said;
  EXPECT_FALSE(child.term_pending());
  // The same start time, another owner (root's top, another user's process now).
  proc.put(child.pid, uid + 1, 1000);
  said = signal_shown_process(frame_showing(proc, child.pid, uid, 1000), term(child.pid));
  EXPECT_NE(said.find("as another user"), std::string::npos) << said;
  EXPECT_FALSE(child.term_pending());
  // A frame that could not read the start time: nothing is sent rather than a guess.
  proc.put(child.pid, uid, 1000);
  said = signal_shown_process(frame_showing(proc, child.pid, uid, std::nullopt), term(child.pid));
  EXPECT_NE(said.find("nothing sent"), std::string::npos) << said;
  EXPECT_FALSE(child.term_pending());
  // The process shown, still there: signalled.
  said = signal_shown_process(frame_showing(proc, child.pid, uid, 1000), term(child.pid));
  EXPECT_EQ(said, "sent SIGTERM to pid " + std::to_string(child.pid));
  EXPECT_TRUE(child.term_pending());
}

}  // namespace
}  // namespace gpumap
