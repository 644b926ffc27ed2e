// The process table scrolls and a key acts only on a row the person saw (issue 53): the live
// view's draw and key (top/top_app.h's draw_top_screen and press_top_key), without a terminal.
#include <set>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/text.h"
#include "output/style.h"
#include "os/proc.h"
#include "session/top.h"
#include "top/top_app.h"

namespace gpumap {
namespace {

using testing::FakeSession;

/// dgx8 with 9 GPU processes (pids 501..509 on GPUs 0..7, the last two on GPU 7, "python3 job-N.py"):
/// at 80x24 the GPU lines fold and the table has room for fewer rows than that.
TopFrame nine_processes() {
  FakeSession f("dgx8");
  for (uint32_t i = 1; i <= 9; ++i)
    f.with_process(std::min<uint32_t>(i - 1, 7),
                   {.pid = 500 + i,
                    .argv = {"python3", "job-" + std::to_string(i) + ".py"},
                    .environ = std::vector<std::string>{"LOCAL_RANK=0"}},  // rank 0 off GPU 0: findings take lines
                   1000 + i);
  return read_top_frame(f.session(), ProcFs(f.proc_root()));
}

std::string text_of(const TopLine& l) {
  std::string s;
  for (const TopSpan& sp : l) s += sp.text;
  return s;
}

/// The pids of the process rows drawn (a table line starts with the pid, right-aligned in 7).
std::set<uint32_t> pids_on_screen(const std::vector<TopLine>& lines) {
  std::set<uint32_t> out;
  for (const TopLine& l : lines) {
    std::string t = text_of(l);
    if (t.size() > 8 && t.find(".py") != std::string::npos && t[7] == ' ') {
      uint32_t pid = 0;
      if (parse_small_uint(trim(t.substr(0, 7)), pid)) out.insert(pid);
    }
  }
  return out;
}

/// The pid on the selected (reverse) line; 0 when no line is selected.
uint32_t selected_on_screen(const std::vector<TopLine>& lines) {
  for (const TopLine& l : lines)
    if (!l.empty() && l.front().attr == TopAttr::kSelected) {
      uint32_t pid = 0;
      parse_small_uint(trim(text_of(l).substr(0, 7)), pid);
      return pid;
    }
  return 0;
}

TEST(TopScroll, At80x24WithNineProcessesEveryRowIsReachedAndTheSelectionIsAlwaysOnScreen) {
  TopFrame f = nine_processes();
  ASSERT_EQ(f.ps.result.rows.size(), 9u);
  TopScreenState s;
  std::vector<TopLine> lines = draw_top_screen(s, f, {}, {}, 80, 24);
  ASSERT_LT(pids_on_screen(lines).size(), 9u) << "the test needs a table with rows off screen";
  std::set<uint32_t> reached;
  for (int i = 0; i < 9; ++i) {
    uint32_t sel = selected_on_screen(lines);
    ASSERT_NE(sel, 0u) << "the selection is off screen after " << i << " Down\n" << top_text(lines, false);
    reached.insert(sel);
    press_top_key(s, kKeyDown, f);
    lines = draw_top_screen(s, f, {}, {}, 80, 24);
  }
  EXPECT_EQ(reached.size(), 9u);
  for (int key : {kKeyHome, kKeyEnd, kKeyPageUp, kKeyPageDown, kKeyEnd}) {
    press_top_key(s, key, f);
    lines = draw_top_screen(s, f, {}, {}, 80, 24);
    EXPECT_NE(selected_on_screen(lines), 0u) << key << "\n" << top_text(lines, false);
  }
  EXPECT_EQ(selected_on_screen(lines), 509u) << top_text(lines, false);  // End: the last row
}

TEST(TopScroll, AfterEndEnterAndKActOnTheRowOnScreenNeverAHiddenOne) {
  TopFrame f = nine_processes();
  TopScreenState s;
  draw_top_screen(s, f, {}, {}, 80, 24);
  press_top_key(s, kKeyEnd, f);
  std::vector<TopLine> lines = draw_top_screen(s, f, {}, {}, 80, 24);
  std::set<uint32_t> shown = pids_on_screen(lines);
  press_top_key(s, 'k', f);
  ASSERT_EQ(s.view.prompt, TopView::Prompt::kSignal) << s.view.message;
  EXPECT_TRUE(shown.count(s.view.signal_pid)) << "k offers pid " << s.view.signal_pid << ", not on screen:\n"
                                              << top_text(lines, false);
  lines = draw_top_screen(s, f, {}, {}, 80, 24);
  // The confirmation names the process: its pid, user and command.
  std::string all = top_text(lines, false);
  std::string target = "pid " + std::to_string(s.view.signal_pid);
  EXPECT_NE(all.find(target + "  user root  python3 job-"), std::string::npos) << all;
  press_top_key(s, 't', f);
  TopAction a = press_top_key(s, 'y', f);
  ASSERT_EQ(a.kind, TopAction::kSignal);
  EXPECT_TRUE(shown.count(a.pid)) << a.pid;
  press_top_key(s, kKeyEnter, f);
  EXPECT_EQ(s.view.screen, TopView::Screen::kDetail);
  EXPECT_TRUE(shown.count(s.view.detail_pid)) << "Enter opened pid " << s.view.detail_pid << ", not on screen";
}

TEST(TopScroll, TheScreenSaysHowManyRowsAreAboveAndBelow) {
  TopFrame f = nine_processes();
  TopScreenState s;
  std::vector<TopLine> lines = draw_top_screen(s, f, {}, {}, 80, 24);
  size_t shown = pids_on_screen(lines).size();
  std::string all = top_text(lines, false);
  EXPECT_NE(all.find("↓ " + std::to_string(9 - shown) + " more"), std::string::npos) << all;
  EXPECT_EQ(all.find("↑ "), std::string::npos) << all;
  press_top_key(s, kKeyEnd, f);
  lines = draw_top_screen(s, f, {}, {}, 80, 24);
  all = top_text(lines, false);
  EXPECT_NE(all.find("↑ " + std::to_string(9 - pids_on_screen(lines).size()) + " more"), std::string::npos) << all;
  s.view.utf8 = false;  // ASCII terminals: the same words
  all = top_text(draw_top_screen(s, f, {}, {}, 80, 24), false);
  EXPECT_NE(all.find("^ " + std::to_string(9 - pids_on_screen(lines).size()) + " more"), std::string::npos) << all;
  // 132x40: room for all nine, no such line.
  all = top_text(draw_top_screen(s, f, {}, {}, 132, 40), false);
  EXPECT_EQ(all.find(" more  (PgUp"), std::string::npos) << all;
}

TEST(TopScroll, LeftAndRightScrollTheCommand) {
  TopFrame f = nine_processes();
  TopScreenState s;
  std::string all = top_text(draw_top_screen(s, f, {}, {}, 80, 24), false);
  EXPECT_NE(all.find("python3 job-1.py"), std::string::npos) << all;
  press_top_key(s, kKeyRight, f);
  all = top_text(draw_top_screen(s, f, {}, {}, 80, 24), false);
  EXPECT_EQ(all.find("python3 job-1.py"), std::string::npos) << all;
  EXPECT_NE(all.find(" job-1.py"), std::string::npos) << all;  // "python3 " scrolled off
  EXPECT_NE(all.find("COMMAND +8"), std::string::npos) << all;
  press_top_key(s, kKeyLeft, f);
  press_top_key(s, kKeyLeft, f);  // never past the start
  all = top_text(draw_top_screen(s, f, {}, {}, 80, 24), false);
  EXPECT_NE(all.find("python3 job-1.py"), std::string::npos) << all;
  EXPECT_EQ(s.view.command_hscroll, 0u);
}

TEST(TopScroll, TheWheelScrollsAndAClickSelectsTheRowUnderIt) {
  TopFrame f = nine_processes();
  TopScreenState s;
  std::vector<TopLine> lines = draw_top_screen(s, f, {}, {}, 80, 24);
  for (int i = 0; i < 8; ++i) {
    press_top_key(s, kKeyWheelDown, f);
    lines = draw_top_screen(s, f, {}, {}, 80, 24);
  }
  EXPECT_EQ(selected_on_screen(lines), 509u) << top_text(lines, false);
  // A click on the table's third line selects the row drawn there; one off the table does nothing.
  size_t line = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (text_of(lines[i]).find("    PID ") == 0) line = i + 3;
  ASSERT_GT(line, 0u) << top_text(lines, false);
  uint32_t pid = 0;
  ASSERT_TRUE(parse_small_uint(trim(text_of(lines[line]).substr(0, 7)), pid)) << text_of(lines[line]);
  press_top_key(s, top_click_key(line), f);
  lines = draw_top_screen(s, f, {}, {}, 80, 24);
  EXPECT_EQ(selected_on_screen(lines), pid) << top_text(lines, false);
  press_top_key(s, top_click_key(0), f);  // the title line
  EXPECT_EQ(selected_on_screen(draw_top_screen(s, f, {}, {}, 80, 24)), pid);
}

TEST(TopScroll, At80x24And132x40And200x60EveryLineFitsAndEndShowsTheLastRow) {
  TopFrame f = nine_processes();
  for (auto [w, h] : std::initializer_list<std::pair<size_t, size_t>>{{80, 24}, {132, 40}, {200, 60}}) {
    TopScreenState s;
    draw_top_screen(s, f, {}, {}, w, h);
    press_top_key(s, kKeyEnd, f);
    std::vector<TopLine> lines = draw_top_screen(s, f, {}, {}, w, h);
    ASSERT_EQ(lines.size(), h);
    for (const TopLine& l : lines) EXPECT_LE(display_width(text_of(l)), w) << text_of(l);
    EXPECT_EQ(selected_on_screen(lines), 509u) << w << "x" << h << "\n" << top_text(lines, false);
    press_top_key(s, 'k', f);
    EXPECT_EQ(s.view.signal_pid, 509u) << w << "x" << h;
  }
}

}  // namespace
}  // namespace gpumap
