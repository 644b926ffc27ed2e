// top's `e` (a process's whole environment) and `m` (tagging several processes for one signal),
// through the live view's draw and key (top/top_app.h), without a terminal.  No signal is sent:
// the fixture's pids are not this machine's processes.
#include <gtest/gtest.h>

#include "fake_session.h"
#include "os/proc.h"
#include "session/top.h"
#include "top/top_app.h"

namespace gpumap {
namespace {

using testing::FakeSession;

/// Three processes on h200x2 (601 with a few variables); `f` must outlive the frame's /proc reads.
TopFrame three(FakeSession& f) {
  f.with_process(0, {.pid = 601, .argv = {"python3", "a.py"},
                     .environ = std::vector<std::string>{"PATH=/bin", "CUDA_VISIBLE_DEVICES=1", "HOME=/root", "LOCAL_RANK=0"}});
  f.with_process(0, {.pid = 602, .argv = {"python3", "b.py"}});
  f.with_process(1, {.pid = 603, .argv = {"python3", "c.py"}});
  return read_top_frame(f.session(), ProcFs(f.proc_root()));
}

TEST(TopEnviron, EShowsTheWholeEnvironmentTheVariablesGpumapReadsFirstAndMarked) {
  FakeSession fs("h200x2");
  TopFrame f = three(fs);
  TopScreenState s;
  draw_top_screen(s, f, {}, {}, 132, 40);
  TopAction a = press_top_key(s, 'e', f);
  ASSERT_EQ(a.kind, TopAction::kEnviron) << s.view.message;
  EXPECT_EQ(s.view.screen, TopView::Screen::kEnviron);
  EXPECT_TRUE(s.view.environ_note.empty()) << s.view.environ_note;
  std::string screen = top_text(draw_top_screen(s, f, {}, {}, 132, 40), false);
  size_t cvd = screen.find("* CUDA_VISIBLE_DEVICES=1"), lr = screen.find("* LOCAL_RANK=0"), home = screen.find("  HOME=/root");
  ASSERT_NE(cvd, std::string::npos) << screen;
  ASSERT_NE(lr, std::string::npos) << screen;
  ASSERT_NE(home, std::string::npos) << screen;
  EXPECT_LT(lr, home) << "the variables gpumap reads come first\n" << screen;
  EXPECT_EQ(screen.find("* HOME"), std::string::npos) << screen;
  EXPECT_NE(screen.find("Environment of pid 601"), std::string::npos) << screen;
  EXPECT_NE(screen.find("4 variables"), std::string::npos) << screen;
  press_top_key(s, kKeyEscape, f);
  EXPECT_EQ(s.view.screen, TopView::Screen::kMain);
}

TEST(TopTag, MTagsSeveralProcessesAndKAsksOnceForThemAll) {
  FakeSession fs("h200x2");
  TopFrame f = three(fs);
  TopScreenState s;
  draw_top_screen(s, f, {}, {}, 132, 40);
  press_top_key(s, 'm', f);  // 601, and down
  draw_top_screen(s, f, {}, {}, 132, 40);
  press_top_key(s, kKeyDown, f);
  draw_top_screen(s, f, {}, {}, 132, 40);
  press_top_key(s, 'm', f);  // 603
  std::vector<TopLine> lines = draw_top_screen(s, f, {}, {}, 132, 40);
  std::string screen = top_text(lines, false);
  EXPECT_EQ(s.view.tagged.size(), 2u) << s.view.message;
  EXPECT_NE(screen.find("*601 "), std::string::npos) << screen;
  EXPECT_NE(screen.find("*603 "), std::string::npos) << screen;
  EXPECT_EQ(screen.find("*602 "), std::string::npos) << screen;
  press_top_key(s, 'k', f);
  ASSERT_EQ(s.view.prompt, TopView::Prompt::kSignal);
  screen = top_text(draw_top_screen(s, f, {}, {}, 132, 40), false);
  EXPECT_NE(screen.find("signal 2 tagged processes: t TERM"), std::string::npos) << screen;
  EXPECT_NE(screen.find("tagged: pid 601 (root python3 a.py), pid 603 (root python3 c.py)"), std::string::npos) << screen;
  press_top_key(s, 't', f);
  TopAction a = press_top_key(s, 'y', f);
  ASSERT_EQ(a.kind, TopAction::kSignal);
  EXPECT_EQ(a.pid, 0u);
  EXPECT_EQ(a.pids, (std::vector<uint32_t>{601, 603}));
  // M untags every one; a tag goes with its process when it leaves the GPUs.
  press_top_key(s, 'M', f);
  EXPECT_TRUE(s.view.tagged.empty());
  press_top_key(s, kKeyHome, f);
  draw_top_screen(s, f, {}, {}, 132, 40);
  press_top_key(s, 'm', f);
  ASSERT_EQ(s.view.tagged.size(), 1u);
  TopFrame gone = f;
  std::erase_if(gone.ps.result.rows, [](const ProcessRow& r) { return r.pid == 601; });  // 601 left
  draw_top_screen(s, gone, {}, {}, 132, 40);
  EXPECT_TRUE(s.view.tagged.empty());
}

}  // namespace
}  // namespace gpumap
