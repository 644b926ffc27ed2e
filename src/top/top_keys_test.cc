// Every key of `gpumap top` on the view, without a terminal.
#include "top/top_keys.h"

#include <csignal>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "os/proc.h"
#include "session/top.h"

namespace gpumap {
namespace {

using testing::FakeSession;

TopFrame frame() {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 101, .argv = {"python3", "a.py"}, .uid = 1000}, 3000);
  f.with_process(1, {.pid = 102, .argv = {"python3", "b.py"}}, 1000);
  return read_top_frame(f.session(), ProcFs(f.proc_root()));
}

void type(TopView& v, const TopFrame& f, const std::string& keys) {
  for (char c : keys) top_key(v, static_cast<unsigned char>(c), f, 10);
}

TEST(TopKeys, QuitFromTheMainScreenAndCtrlCFromAnywhere) {
  TopFrame f = frame();
  TopView v;
  EXPECT_EQ(top_key(v, 'q', f, 10).kind, TopAction::kQuit);
  v.screen = TopView::Screen::kDetail;
  EXPECT_EQ(top_key(v, 'q', f, 10).kind, TopAction::kNone);  // q leaves the detail first
  EXPECT_EQ(v.screen, TopView::Screen::kMain);
  v.prompt = TopView::Prompt::kFilter;
  EXPECT_EQ(top_key(v, kKeyCtrlC, f, 10).kind, TopAction::kNone);  // Ctrl-C cancels the prompt
  EXPECT_EQ(top_key(v, kKeyCtrlC, f, 10).kind, TopAction::kQuit);
}

TEST(TopKeys, SelectionStaysOnTheTable) {
  TopFrame f = frame();
  TopView v;
  for (int i = 0; i < 5; ++i) top_key(v, kKeyDown, f, 10);
  EXPECT_EQ(v.selected, 1u);
  top_key(v, kKeyHome, f, 10);
  EXPECT_EQ(v.selected, 0u);
  top_key(v, kKeyEnd, f, 10);
  EXPECT_EQ(v.selected, 1u);
  top_key(v, kKeyPageUp, f, 10);
  EXPECT_EQ(v.selected, 0u);
}

TEST(TopKeys, SortColumnsCycleAndReverse) {
  TopFrame f = frame();
  TopView v;
  top_key(v, '>', f, 10);
  EXPECT_EQ(v.sort, TopColumn::kCuda);
  top_key(v, '<', f, 10);
  top_key(v, '<', f, 10);
  EXPECT_EQ(v.sort, TopColumn::kUser);
  for (TopColumn next : {TopColumn::kGpu, TopColumn::kCuda, TopColumn::kMemory, TopColumn::kUtil, TopColumn::kCpu,
                         TopColumn::kRss, TopColumn::kTime, TopColumn::kJob}) {
    top_key(v, '>', f, 10);
    EXPECT_EQ(v.sort, next) << top_column_name(next);  // every column, the new ones too
  }
  v.sort = TopColumn::kMemory;  // a resource: largest first, as htop and nvitop sort it
  EXPECT_EQ(top_rows(f, v)[0].row->pid, 101u);  // 3000 MiB before 1000
  top_key(v, 'r', f, 10);
  EXPECT_TRUE(v.reverse);
  EXPECT_EQ(top_rows(f, v)[0].row->pid, 102u);
  v.reverse = false;
  v.sort = TopColumn::kPid;  // not a resource: smallest first
  EXPECT_EQ(top_rows(f, v)[0].row->pid, 101u);
}

TEST(TopKeys, CTogglesTheCompactGpuLines) {
  TopFrame f = frame();
  TopView v;
  EXPECT_FALSE(v.compact_toggled);
  top_key(v, 'c', f, 10);
  EXPECT_TRUE(v.compact_toggled);
  top_key(v, 'c', f, 10);
  EXPECT_FALSE(v.compact_toggled);
}

TEST(TopKeys, FilterIsTypedAppliedCheckedAndCleared) {
  TopFrame f = frame();
  TopView v;
  top_key(v, '/', f, 10);
  EXPECT_EQ(v.prompt, TopView::Prompt::kFilter);
  type(v, f, "b.pyx");
  top_key(v, kKeyBackspace, f, 10);
  EXPECT_EQ(v.typed, "b.py");
  top_key(v, kKeyEnter, f, 10);
  EXPECT_EQ(v.filter, "b.py");
  EXPECT_EQ(top_rows(f, v).size(), 1u);
  top_key(v, '/', f, 10);
  v.typed.clear();
  type(v, f, "pid:x");
  top_key(v, kKeyEnter, f, 10);
  EXPECT_EQ(v.prompt, TopView::Prompt::kFilter);  // refused: still typing
  EXPECT_NE(v.message.find("a pid is a number"), std::string::npos) << v.message;
  top_key(v, kKeyEscape, f, 10);
  EXPECT_EQ(v.prompt, TopView::Prompt::kNone);
  EXPECT_TRUE(v.filter.empty());
}

TEST(TopKeys, EnterOpensTheSelectedProcess) {
  TopFrame f = frame();
  TopView v;
  top_key(v, kKeyDown, f, 10);
  top_key(v, kKeyEnter, f, 10);
  EXPECT_EQ(v.screen, TopView::Screen::kDetail);
  EXPECT_EQ(v.detail_pid, 102u);
  top_key(v, kKeyRight, f, 10);
  EXPECT_EQ(v.detail_hscroll, 8u);
  top_key(v, kKeyEscape, f, 10);
  EXPECT_EQ(v.screen, TopView::Screen::kMain);
}

TEST(TopKeys, ASignalIsChosenByLetterAndConfirmedNoSingleKeySendsOne) {
  TopFrame f = frame();
  TopView v;
  top_key(v, 'k', f, 10);
  ASSERT_EQ(v.prompt, TopView::Prompt::kSignal) << v.message;
  EXPECT_EQ(v.signal, 0);  // not chosen yet
  top_key(v, 'n', f, 10);
  EXPECT_EQ(v.prompt, TopView::Prompt::kNone);
  EXPECT_EQ(v.message, "no signal sent");
  // No key alone sends anything: a letter, a digit or y right after k only chooses or cancels.
  for (int key : std::initializer_list<int>{'t', 'k', 'h', 'i', '1', '9', '5', 'y', kKeyEnter}) {
    top_key(v, 'k', f, 10);
    EXPECT_EQ(top_key(v, key, f, 10).kind, TopAction::kNone) << key;
    top_key(v, kKeyEscape, f, 10);
    EXPECT_EQ(v.prompt, TopView::Prompt::kNone) << key;
  }
  for (auto [letter, sig] : std::initializer_list<std::pair<char, int>>{{'t', SIGTERM}, {'k', SIGKILL}, {'h', SIGHUP}, {'i', SIGINT}}) {
    top_key(v, 'k', f, 10);
    top_key(v, letter, f, 10);
    EXPECT_EQ(v.signal, sig);
    EXPECT_EQ(v.prompt, TopView::Prompt::kSignal);  // still asking
    TopAction a = top_key(v, 'y', f, 10);
    EXPECT_EQ(a.kind, TopAction::kSignal);
    EXPECT_EQ(a.pid, 101u);
    EXPECT_EQ(a.signal, sig);
    EXPECT_EQ(v.prompt, TopView::Prompt::kNone);
  }
  top_key(v, 'k', f, 10);
  top_key(v, 'k', f, 10);
  EXPECT_EQ(top_key(v, 'n', f, 10).kind, TopAction::kNone);  // chosen, then refused
  EXPECT_EQ(v.message, "no signal sent");
}

TEST(TopKeys, AnExitedProcessIsNotOfferedASignal) {
  FakeSession fs("h200x2");
  fs.host()["gpus"][0]["processes"] = {{{"pid", 4000000}, {"used_memory_mib", 1}}};  // no /proc entry
  TopFrame f = read_top_frame(fs.session(), ProcFs(fs.proc_root()));
  TopView v;
  top_key(v, 'k', f, 10);
  EXPECT_EQ(v.prompt, TopView::Prompt::kNone);
  EXPECT_NE(v.message.find("cannot be signalled"), std::string::npos) << v.message;
}

TEST(TopKeys, PauseSpeedInfoTreeAndHelp) {
  TopFrame f = frame();
  TopView v;
  EXPECT_EQ(top_key(v, ' ', f, 10).kind, TopAction::kNone);
  EXPECT_TRUE(v.paused);
  EXPECT_EQ(top_key(v, ' ', f, 10).kind, TopAction::kReadNow);
  for (int i = 0; i < 5; ++i) top_key(v, '+', f, 10);
  EXPECT_EQ(v.interval_s, 0.25);
  for (int i = 0; i < 12; ++i) top_key(v, '-', f, 10);
  EXPECT_EQ(v.interval_s, 60);
  top_key(v, 'i', f, 10);
  EXPECT_TRUE(v.show_info);
  top_key(v, 't', f, 10);
  EXPECT_TRUE(v.tree);
  top_key(v, '?', f, 10);
  EXPECT_EQ(v.screen, TopView::Screen::kHelp);
  EXPECT_EQ(top_key(v, 'x', f, 10).kind, TopAction::kNone);
  EXPECT_EQ(v.screen, TopView::Screen::kMain);
}

}  // namespace
}  // namespace gpumap
