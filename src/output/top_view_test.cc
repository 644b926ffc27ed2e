// The `top` screen as a pure function: frames read in process (FakeSession), drawn at fixed sizes.
#include "output/top_view.h"

#include <csignal>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "os/proc.h"
#include "model/text.h"
#include "output/style.h"
#include "session/top.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

std::string text_of(const TopLine& l) {
  std::string s;
  for (const TopSpan& sp : l) s += sp.text;
  return s;
}

std::string screen_text(const std::vector<TopLine>& lines) {
  std::string s;
  for (const TopLine& l : lines) s += text_of(l) + "\n";
  return s;
}

/// h200x2 seen from a shell with CUDA_VISIBLE_DEVICES=1: torchrun (50) with rank 0 outside its
/// visible set on GPU 0 and rank 1 on GPU 1.
TopFrame ranks_frame(const std::vector<std::string>& rank0_env = {"CUDA_VISIBLE_DEVICES=1", "LOCAL_RANK=0"}) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  f.with_proc_entry({.pid = 50, .argv = {"torchrun", "--nproc-per-node", "2", "train.py"}});
  f.with_process(0, {.pid = 101, .argv = {"python3", "train.py", "--model", "llama-70b"}, .environ = rank0_env, .ppid = 50}, 1000);
  f.with_process(1, {.pid = 102, .environ = std::vector<std::string>{"LOCAL_RANK=1"}, .ppid = 50}, 2000);
  return read_top_frame(f.session(), ProcFs(f.proc_root()));
}

TEST(RenderTop, At80x24EveryLineFitsAndSaysEachProcesssOwnCudaNumber) {
  TopFrame t = ranks_frame();
  ASSERT_TRUE(t.error.empty()) << t.error;
  TopHistory h;
  record_history(h, t);
  std::vector<TopLine> lines = render_top(t, h, TopView{}, {.now_unix_ms = t.read_unix_ms}, 80, 24);
  ASSERT_EQ(lines.size(), 24u);
  for (const TopLine& l : lines) EXPECT_LE(display_width(text_of(l)), 80u) << text_of(l);
  std::string s = screen_text(lines);
  EXPECT_NE(s.find(" 0 -       H200"), std::string::npos) << s;  // GPU 0 is hidden from this shell
  EXPECT_NE(s.find(" 1 cuda:0  H200"), std::string::npos) << s;  // GPU 1 is this shell's cuda:0
  EXPECT_NE(s.find("    101 root        0 none"), std::string::npos) << s;   // outside its visible set
  EXPECT_NE(s.find("    102 root        1 cuda:1"), std::string::npos) << s;  // its own cuda:1
  EXPECT_NE(s.find("[error] GPU 0 outside-visible-set (pid 101)"), std::string::npos) << s;
  EXPECT_NE(s.find("q quit"), std::string::npos) << s;  // the key line, last
  EXPECT_EQ(text_of(lines.back()).rfind("q quit", 0), 0u);
}

TEST(RenderTop, ACudaNumberCountedInsideAContainerIsMarked) {
  // pid 7 in its container, whose NVIDIA_VISIBLE_DEVICES=1 gives it host GPU 1 alone: its
  // CUDA_VISIBLE_DEVICES=0 is that GPU, its cuda:0, though the host's cuda:0 is GPU 0.
  FakeSession f("h200x2");
  f.with_process(1, {.pid = 4242, .environ = std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=0"},
                     .nspid = {7}}, 1000);
  f.with_process(0, {.pid = 4343, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0"}}, 1000);
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  ASSERT_TRUE(t.error.empty()) << t.error;
  std::string s = screen_text(render_top(t, {}, TopView{}, {}, 100, 30));
  EXPECT_NE(s.find("   4242 root        1 cuda:0*"), std::string::npos) << s;
  EXPECT_NE(s.find("   4343 root        0 cuda:0 "), std::string::npos) << "a host process: no mark\n" << s;
}

TEST(RenderTop, TheHelpScreenFits80x24AndKeepsEveryWordOfItsLegends) {
  TopView v;
  v.screen = TopView::Screen::kHelp;
  std::vector<TopLine> lines = render_top(ranks_frame(), {}, v, {}, 80, 24);
  ASSERT_EQ(lines.size(), 24u);
  std::string words;
  for (const TopLine& l : lines) {
    EXPECT_LE(display_width(text_of(l)), 80u) << text_of(l);
    EXPECT_EQ(text_of(l).find("\u2026"), std::string::npos) << "cut: " << text_of(l);
    words += " " + text_of(l);
  }
  std::string squeezed;  // the wrapped lines read as one text again
  for (char c : words)
    if (c != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += c;
  EXPECT_NE(squeezed.find("cuda:N on a GPU line: this shell's (- : hidden);"), std::string::npos) << screen_text(lines);
  EXPECT_NE(squeezed.find("(none: outside its visible set; cuda:N*: counted inside its container)."), std::string::npos)
      << screen_text(lines);
}

TEST(RenderTop, WiderTerminalsGiveTheCommandTheRoom) {
  TopFrame t = ranks_frame();
  std::string narrow = screen_text(render_top(t, {}, TopView{}, {}, 80, 24));
  std::string wide = screen_text(render_top(t, {}, TopView{}, {}, 132, 40));
  EXPECT_EQ(narrow.find("python3 train.py --model llama-70b"), std::string::npos) << narrow;
  EXPECT_NE(wide.find("python3 train.py --model llama-70b"), std::string::npos) << wide;
  EXPECT_EQ(render_top(t, {}, TopView{}, {}, 132, 40).size(), 40u);
}

TEST(RenderTop, InfoFindingsAreHiddenUntilAsked) {
  TopFrame t = ranks_frame({"LOCAL_RANK=0"});  // sees every GPU on a shared host: an info finding
  TopView v;
  std::string hidden = screen_text(render_top(t, {}, v, {}, 100, 30));
  EXPECT_NE(hidden.find("info hidden: i shows"), std::string::npos) << hidden;
  EXPECT_EQ(hidden.find("[info]"), std::string::npos) << hidden;
  v.show_info = true;
  std::string shown = screen_text(render_top(t, {}, v, {}, 100, 30));
  EXPECT_NE(shown.find("[info]"), std::string::npos) << shown;
}

TEST(RenderTop, EachFindingOncePerGpuNotOncePerProcess) {
  FakeSession f("h200x2");
  for (uint32_t pid = 201; pid <= 204; ++pid)  // four ranks, all on GPU 0
    f.with_process(0, {.pid = pid, .environ = std::vector<std::string>{"LOCAL_RANK=" + std::to_string(pid - 201)}});
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  TopView v;
  v.show_info = true;
  std::string s = screen_text(render_top(t, {}, v, {}, 120, 40));
  size_t n = 0;
  for (size_t at = s.find("ranks-share-gpu"); at != std::string::npos; at = s.find("ranks-share-gpu", at + 1)) ++n;
  EXPECT_EQ(n, 1u) << s;
  EXPECT_NE(s.find("(pid 201,202,203,204)"), std::string::npos) << s;
}

TEST(RenderTop, EightGpusAndManyProcessesStillFit80x24) {
  FakeSession f("dgx8");
  for (uint32_t pid = 300; pid < 340; ++pid) f.with_process((pid - 300) % 8, {.pid = pid});
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  TopView v;
  std::vector<TopLine> lines = render_top(t, {}, v, {}, 80, 24);
  ASSERT_EQ(lines.size(), 24u);
  std::string s = screen_text(lines);
  EXPECT_NE(s.find(" 7 cuda:7"), std::string::npos) << s;  // every GPU, one line each
  EXPECT_NE(s.find("    300 "), std::string::npos) << s;
  v.selected = 39;
  v.scroll = 30;  // scrolled to the end: the last process shows
  std::string end = screen_text(render_top(t, {}, v, {}, 80, 24));
  EXPECT_NE(end.find("    339 "), std::string::npos) << end;
}

TEST(RenderTop, TreePutsRanksUnderTheirLauncher) {
  TopFrame t = ranks_frame();
  TopView v;
  v.tree = true;
  std::vector<TopRow> rows = top_rows(t, v);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].row, nullptr);
  EXPECT_EQ(rows[0].parent_pid, 50u);
  EXPECT_EQ(rows[1].depth, 1);
  std::string s = screen_text(render_top(t, {}, v, {}, 100, 30));
  EXPECT_NE(s.find("torchrun --nproc-per-node 2 train.py"), std::string::npos) << s;
  EXPECT_NE(s.find("└─ python3 train.py"), std::string::npos) << s;
}

TEST(RenderTop, FiltersBySortsByAndSaysWhenNothingMatches) {
  TopFrame t = ranks_frame();
  TopView v;
  v.filter = "gpu:1";
  ASSERT_EQ(top_rows(t, v).size(), 1u);
  EXPECT_EQ(top_rows(t, v)[0].row->pid, 102u);
  v.filter = "llama";
  ASSERT_EQ(top_rows(t, v).size(), 1u);
  EXPECT_EQ(top_rows(t, v)[0].row->pid, 101u);
  v.filter = "user:nobody";
  EXPECT_NE(screen_text(render_top(t, {}, v, {}, 80, 24)).find("no process matches user:nobody"), std::string::npos);
  v.filter.clear();
  v.sort = TopColumn::kMemory;
  EXPECT_EQ(top_rows(t, v)[0].row->pid, 102u);  // 2000 MiB first: resources sort largest first
  v.reverse = true;
  EXPECT_EQ(top_rows(t, v)[0].row->pid, 101u);
  EXPECT_TRUE(top_filter_error("pid:abc"));
  EXPECT_TRUE(top_filter_error("user:"));
  EXPECT_FALSE(top_filter_error("http://x"));  // text with a colon is text
}

TEST(RenderTop, TheDetailShowsVariablesItsMapAndFixesUnwrapped) {
  TopFrame t = ranks_frame({"CUDA_VISIBLE_DEVICES=1", "LOCAL_RANK=0"});
  TopView v;
  v.screen = TopView::Screen::kDetail;
  v.detail_pid = 101;
  std::string s = screen_text(render_top(t, {}, v, {}, 80, 40));
  EXPECT_NE(s.find("CUDA_VISIBLE_DEVICES=1"), std::string::npos) << s;
  EXPECT_NE(s.find("cuda:0 -> nvidia-smi 1"), std::string::npos) << s;
  EXPECT_NE(s.find("[error] outside-visible-set (GPU 0)"), std::string::npos) << s;
  v.detail_pid = 999;
  EXPECT_NE(screen_text(render_top(t, {}, v, {}, 80, 24)).find("no longer on any GPU"), std::string::npos);
}

TEST(RenderTop, AFixWiderThanTheScreenStaysOneLineAndScrollsSideways) {
  TopFrame t = ranks_frame({"LOCAL_RANK=0"});  // its fix names a full UUID: longer than 80 columns
  TopView v;
  v.screen = TopView::Screen::kDetail;
  v.detail_pid = 101;
  std::vector<TopLine> lines = render_top(t, {}, v, {}, 80, 40);
  const TopLine* fix = nullptr;
  for (const TopLine& l : lines)
    if (text_of(l).find("fix: ") != std::string::npos) fix = &l;
  ASSERT_NE(fix, nullptr) << screen_text(lines);
  EXPECT_NE(text_of(*fix).find("CUDA_VISIBLE_DEVICES=GPU-ef612c2c"), std::string::npos) << text_of(*fix);
  EXPECT_EQ(display_width(text_of(*fix)), 80u);  // cut at the edge, not wrapped onto the next line
  v.detail_hscroll = 40;
  std::string shifted = screen_text(render_top(t, {}, v, {}, 80, 40));
  EXPECT_NE(shifted.find("python3 train.py"), std::string::npos) << shifted;  // the fix's end
}

TEST(RenderTop, AStaleReadAndAFailedReadAreSaid) {
  TopFrame t = ranks_frame();
  TopStatus st{.now_unix_ms = t.read_unix_ms + 9000, .reading = true, .reading_since_ms = t.read_unix_ms + 1000};
  std::string s = screen_text(render_top(t, {}, TopView{}, st, 80, 24));
  EXPECT_NE(s.find("STALE: the driver has not answered for 8s; showing the read of 9s ago"), std::string::npos) << s;
  t.error = "the NVIDIA driver did not answer within 60 s";
  s = screen_text(render_top(t, {}, TopView{}, {}, 80, 24));
  EXPECT_NE(s.find("read failed: the NVIDIA driver did not answer"), std::string::npos) << s;
  EXPECT_NE(s.find("    101 "), std::string::npos) << s;  // the last good frame stays
}

// Cells counted here on their own, not by display_width: a CJK ideograph (U+3000-U+9FFF) and a
// Hangul syllable take two, any other character one.
size_t cells(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    char32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    n += (cp >= 0x3000 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3) ? 2 : 1;
    i += len;
  }
  return n;
}

// Issue 46, item 11: a command in Chinese fits 80 columns on every screen (a row was 84 cells).
TEST(RenderTop, WideCharactersTakeTwoCellsAndEveryLineFits80Columns) {
  FakeSession f("h200x2");
  const std::string zh = "\u8bad\u7ec3\u6a21\u578b";  // 训练模型
  f.with_proc_entry({.pid = 60, .argv = {"\u542f\u52a8\u5668", zh + zh + zh}});
  f.with_process(0, {.pid = 61, .argv = {"python3", zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + ".py", "--" + zh}, .ppid = 60});
  f.with_process(1, {.pid = 62, .argv = {zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + zh + zh}});
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  ASSERT_TRUE(t.error.empty()) << t.error;
  TopHistory h;
  record_history(h, t);
  for (bool tree : {false, true})
    for (bool utf8 : {true, false}) {
      TopView v;
      v.tree = tree;
      v.utf8 = utf8;
      std::vector<TopLine> lines = render_top(t, h, v, {.now_unix_ms = t.read_unix_ms}, 80, 24);
      std::string s = screen_text(lines);
      EXPECT_NE(s.find(utf8 ? "\u8bad\u7ec3" : "????"), std::string::npos) << s;
      for (const TopLine& l : lines) EXPECT_LE(cells(text_of(l)), 80u) << text_of(l);
    }
}

// Issue 46, item 10: the tree is built from each row's children listed once and walked without
// recursion: a chain of 20 000 processes, each the parent of the next, and 20 000 siblings under
// one launcher keep every row at its depth.
TEST(RenderTop, TheTreeOfALongChainAndManySiblingsKeepsEveryRow) {
  TopFrame f;
  const uint32_t n = 20000;
  for (uint32_t i = 0; i < n; ++i) {
    ProcessRow r;
    r.pid = r.local_pid.emplace(1000 + i);
    r.ppid = i ? 999 + i : 1;
    r.command = "chain";
    f.ps.result.rows.push_back(r);
  }
  for (uint32_t i = 0; i < n; ++i) {
    ProcessRow r;
    r.pid = r.local_pid.emplace(200000 + i);
    r.ppid = 50;
    r.command = "sibling";
    f.ps.result.rows.push_back(r);
  }
  f.parents[50] = "launcher";
  TopView v;
  v.tree = true;
  std::vector<TopRow> t = top_rows(f, v);
  ASSERT_EQ(t.size(), 2 * n + 1);  // every row, and the launcher's line
  int deepest = 0;
  size_t siblings = 0;
  for (const TopRow& r : t) {
    if (!r.row) continue;
    deepest = std::max(deepest, r.depth);
    if (*r.row->command == "sibling") {
      EXPECT_EQ(r.depth, 1);
      ++siblings;
    }
  }
  EXPECT_EQ(deepest, static_cast<int>(n - 1));
  EXPECT_EQ(siblings, n);
}

TEST(RenderTop, AsciiTerminalsGetNoMultibyteCharacter) {
  TopFrame t = ranks_frame();
  TopHistory h;
  record_history(h, t);
  TopView v;
  v.utf8 = false;
  v.tree = true;
  for (auto screen : {TopView::Screen::kMain, TopView::Screen::kHelp, TopView::Screen::kDetail}) {
    v.screen = screen;
    v.detail_pid = 101;
    std::string s = screen_text(render_top(t, h, v, {}, 80, 24));
    for (unsigned char c : s) ASSERT_LT(c, 0x80) << s;
  }
}

TEST(RenderTop, EscapeCodesInACommandNeverReachTheTerminal) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 77, .argv = {"evil\033[2J\033]0;title\007", "x"}});
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  for (auto screen : {TopView::Screen::kMain, TopView::Screen::kDetail}) {
    TopView v;
    v.screen = screen;
    v.detail_pid = 77;
    std::string s = screen_text(render_top(t, {}, v, {}, 100, 30));
    EXPECT_EQ(s.find('\033'), std::string::npos);
    EXPECT_EQ(s.find('\007'), std::string::npos);
    EXPECT_NE(s.find("evil?[2J"), std::string::npos) << s;
  }
}

// The 8-bit CSI (0x9b, a control on terminals that honour C1 codes) and bytes that are not UTF-8
// are as dangerous as ESC: every screen, the table and the detail, replaces them.
TEST(RenderTop, EightBitControlsAndInvalidBytesNeverReachTheTerminal) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 78, .argv = {"evil\x9b" "2J\xff\xfeX", "\xc2\x9b" "31m"}});
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  for (auto screen : {TopView::Screen::kMain, TopView::Screen::kDetail}) {
    TopView v;
    v.screen = screen;
    v.detail_pid = 78;
    std::string s = top_text(render_top(t, {}, v, {}, 120, 0), false);
    EXPECT_EQ(s.find('\x9b'), std::string::npos) << s;
    EXPECT_EQ(s.find('\xff'), std::string::npos) << s;
    EXPECT_NE(s.find("evil?2J"), std::string::npos) << s;
  }
}

TEST(RenderTop, OnceGivesEveryRowAndFindingInFull) {
  TopFrame t = ranks_frame();
  std::string s = top_text(render_top(t, {}, TopView{}, {}, 80, 0), false);
  EXPECT_NE(s.find("does not include it"), std::string::npos) << s;  // the message, wrapped, not cut
  EXPECT_EQ(s.find("q quit"), std::string::npos);                    // no key line
  EXPECT_EQ(s.find('\033'), std::string::npos);
  std::string colored = top_text(render_top(t, {}, TopView{}, {}, 80, 0), true);
  EXPECT_NE(colored.find("\033[31m[error] \033[0m"), std::string::npos) << colored;
}

TEST(TopBar, FillsByEighthsAndSaysUnknown) {
  EXPECT_EQ(top_bar(50, 4, false), "[||  ]");
  EXPECT_EQ(top_bar(std::nullopt, 3, false), "[???]");
  EXPECT_EQ(top_bar(100, 2, true), "▕██▏");
  EXPECT_EQ(top_bar(25, 2, true), "▕▌ ▏");  // 4 of 16 eighths
  EXPECT_EQ(top_bar(0, 2, true), "▕  ▏");
  EXPECT_EQ(top_sparkline({0, 50, 100, 255}, 6, true), "  ▁▄█·");
  EXPECT_EQ(top_sparkline({0, 100}, 1, false), "#");
}


// --- issue 43 item 5 / issue 45 item 4 -------------------------------------------------------------

std::string header_line(const std::vector<TopLine>& lines) {
  for (const TopLine& l : lines)
    if (text_of(l).find("COMMAND") != std::string::npos) return text_of(l);
  return "";
}

/// Writes <proc root>/PID/stat with CPU time (ticks), start (ticks after boot) and resident pages.
void write_stat(const std::string& root, uint32_t pid, uint64_t cpu_ticks, int64_t start_ticks, uint64_t rss_pages) {
  std::ofstream(root + "/" + std::to_string(pid) + "/stat")
      << pid << " (python3) S 1 " << pid << " " << pid << " 0 -1 0 0 0 0 0 " << cpu_ticks << " 0 0 0 20 0 1 0 "
      << start_ticks << " 123456789 " << rss_pages << " 0\n";
}
void write_uptime(const std::string& root, double s) { std::ofstream(root + "/uptime") << s << " 0.00\n"; }

TEST(TopColumns, EveryColumnIsOneRowWithAHeaderAWordACellAndAPlaceInTheHeader) {
  TopFrame t = ranks_frame();
  std::set<std::string> words;
  std::string header = header_line(render_top(t, {}, TopView{}, {}, 200, 40));
  for (const TopColumnSpec& c : top_columns()) {
    EXPECT_TRUE(words.insert(c.name).second) << "two columns called " << c.name;
    EXPECT_EQ(top_column(c.id).header, c.header);
    EXPECT_EQ(top_column_named(c.name), c.id) << c.name;         // --sort takes its word
    EXPECT_EQ(top_column_named(c.header), c.id) << c.header;     // and its header
    EXPECT_NE(header.find(c.header), std::string::npos) << c.header << " not in " << header;
    for (const ProcessRow& r : t.ps.result.rows) EXPECT_FALSE(c.value(r, nullptr).empty()) << c.header;
    EXPECT_TRUE(c.id == TopColumn::kCommand || c.width > 0) << c.header;
  }
  for (const TopColumnSpec& c : top_columns()) {  // sorted by any column: its header and arrow whole
    TopView v;
    v.sort = c.id;
    std::string h = header_line(render_top(t, {}, v, {}, 80, 24));
    EXPECT_NE(h.find(std::string(c.header) + (c.largest_first ? "▼" : "▲")), std::string::npos) << h;
  }
  EXPECT_EQ(top_column_named("sm"), TopColumn::kUtil);
  EXPECT_FALSE(top_column_named("size"));
  for (const char* w : {"mem", "sm", "cpu", "rss", "time"})  // resources: largest first
    EXPECT_TRUE(top_column(*top_column_named(w)).largest_first) << w;
  for (const char* w : {"pid", "user", "gpu", "cuda", "job", "rank", "command"})
    EXPECT_FALSE(top_column(*top_column_named(w)).largest_first) << w;
}

TEST(TopHostUse, CpuPercentRssAndElapsedFromStatAndUptime) {
  ProcStat st;
  st.start_ticks = 1000 * 100;  // started 1000 s after boot
  st.cpu_ticks = 50 * 100;      // 50 s of CPU
  st.rss_pages = 2560;          // 10 MiB of 4 KiB pages
  ProcessHostUse first = host_use_of(st, 1100, 100, 4096, nullptr);
  ASSERT_TRUE(first.cpu_percent && first.rss_kib && first.elapsed_s);
  EXPECT_DOUBLE_EQ(*first.cpu_percent, 50.0);  // over its life, as ps(1): 50 s in 100 s
  EXPECT_EQ(*first.rss_kib, 10240u);
  EXPECT_EQ(*first.elapsed_s, 100);
  ProcCache::CpuSample before{st.start_ticks, st.cpu_ticks, 1100};
  st.cpu_ticks += 200;  // two seconds of CPU in the two seconds since: two cores busy
  ProcessHostUse next = host_use_of(st, 1102, 100, 4096, &before);
  EXPECT_DOUBLE_EQ(*next.cpu_percent, 100.0 * 2 / 2 * 1);  // 2 s CPU / 2 s = 100 %
  before.start_ticks = 5;  // another process with that pid: its life, not the delta
  EXPECT_NEAR(*host_use_of(st, 1102, 100, 4096, &before).cpu_percent, 52.0 / 102 * 100, 1e-9);
}

TEST(TopHostUse, TheFrameReadsThemThroughTheProcSeamAndTheTableShowsThem) {
  FakeSession f("h200x2");
  f.with_process(0, {.pid = 101, .argv = {"python3", "busy.py"}}, 3000);
  f.with_process(1, {.pid = 102, .argv = {"python3", "idle.py"}}, 1000);
  const int64_t hz = clock_ticks_per_second(), page = page_size_bytes();
  uint64_t pages_1g = (1ull << 30) / static_cast<uint64_t>(page);
  write_uptime(f.proc_root(), 10000);
  write_stat(f.proc_root(), 101, 0, (10000 - 3723) * hz, pages_1g);  // 1:02:03 ago, 1 GiB
  write_stat(f.proc_root(), 102, 0, (10000 - 65) * hz, 100);
  ProcCache cache;
  ProcFs proc(f.proc_root());
  TopFrame first = read_top_frame(f.session(), proc, &cache);
  ASSERT_TRUE(first.error.empty()) << first.error;
  ASSERT_EQ(first.host_use.count(101), 1u);
  EXPECT_EQ(first.host_use.at(101).elapsed_s, 3723);
  EXPECT_EQ(first.host_use.at(101).rss_kib, 1024u * 1024);
  write_uptime(f.proc_root(), 10002);  // two seconds later: 101 used 1.5 s of CPU, 102 none
  write_stat(f.proc_root(), 101, static_cast<uint64_t>(hz * 3 / 2), (10000 - 3723) * hz, pages_1g);
  TopFrame t = read_top_frame(f.session(), proc, &cache);
  ASSERT_TRUE(t.host_use.at(101).cpu_percent);
  EXPECT_NEAR(*t.host_use.at(101).cpu_percent, 75.0, 1e-9);
  EXPECT_NEAR(*t.host_use.at(102).cpu_percent, 0.0, 1e-9);
  std::vector<TopLine> lines = render_top(t, {}, TopView{}, {}, 132, 40);
  std::string s = screen_text(lines);
  std::string header = header_line(lines);
  EXPECT_NE(header.find("SM%  CPU%   RSS     TIME"), std::string::npos) << header;
  EXPECT_NE(s.find("3000MiB    -  75.0 1024M  1:02:05"), std::string::npos) << s;
  EXPECT_NE(s.find("1000MiB    -   0.0  "), std::string::npos) << s;
  EXPECT_NE(s.find("01:07"), std::string::npos) << s;  // 102: 67 s
  TopView by_cpu;
  by_cpu.sort = TopColumn::kCpu;
  EXPECT_EQ(top_rows(t, by_cpu)[0].row->pid, 101u);  // the busy one first
  by_cpu.sort = TopColumn::kTime;
  EXPECT_EQ(top_rows(t, by_cpu)[0].row->pid, 101u);  // the oldest first
  // At 80 columns CPU% and RSS fit beside the others (JOB and RANK, empty, give way first, then
  // TIME, so the command keeps 20 cells); sorted by TIME, TIME stays.
  std::string narrow = header_line(render_top(t, {}, TopView{}, {}, 80, 24));
  EXPECT_NE(narrow.find("SM%  CPU%   RSS COMMAND"), std::string::npos) << narrow;
  EXPECT_LE(display_width(narrow), 80u);
  TopView by_time;
  by_time.sort = TopColumn::kTime;
  narrow = header_line(render_top(t, {}, by_time, {}, 80, 24));
  EXPECT_NE(narrow.find("TIME▼"), std::string::npos) << narrow;
  EXPECT_LE(display_width(narrow), 80u);
}

TEST(TopCompact, EightGpusAt132x40LeaveAtLeastTwentyProcessRowsAndCTogglesTheBlocks) {
  FakeSession f("dgx8");
  for (uint32_t pid = 300; pid < 340; ++pid) f.with_process((pid - 300) % 8, {.pid = pid, .argv = {"sleep", "600"}});
  TopFrame t = read_top_frame(f.session(), ProcFs(f.proc_root()));
  ASSERT_TRUE(t.error.empty()) << t.error;
  TopHistory h;
  record_history(h, t);
  auto process_rows = [](const std::string& s) {
    size_t n = 0;
    for (const std::string& line : split(s, '\n'))
      if (line.find("sleep 600") != std::string::npos) ++n;
    return n;
  };
  EXPECT_TRUE(top_auto_compact(8, 40));
  EXPECT_FALSE(top_auto_compact(2, 24));
  TopView v;
  std::string s = screen_text(render_top(t, h, v, {.now_unix_ms = t.read_unix_ms}, 132, 40));
  EXPECT_GE(process_rows(s), 20u) << s;
  EXPECT_EQ(s.find("\n   UTIL"), std::string::npos) << s;  // one line per GPU
  v.compact_toggled = true;                          // c: the full blocks
  std::string full = screen_text(render_top(t, h, v, {.now_unix_ms = t.read_unix_ms}, 132, 40));
  EXPECT_LT(process_rows(full), 20u) << full;
  EXPECT_NE(full.find("\n   UTIL"), std::string::npos) << full;  // the block's second line
  // Two GPUs at 80x24: the blocks take a quarter of the screen, so they stay; c folds them.
  TopFrame two = ranks_frame();
  TopView c;
  EXPECT_NE(screen_text(render_top(two, {}, c, {}, 80, 24)).find("\n   UTIL"), std::string::npos);
  c.compact_toggled = true;
  std::string folded = screen_text(render_top(two, {}, c, {}, 80, 24));
  EXPECT_EQ(folded.find("\n   UTIL"), std::string::npos) << folded;
  EXPECT_NE(folded.find(" 1 cuda:0  H200"), std::string::npos) << folded;
}

TEST(TopFilter, AppliesToTheFindingsAndTheFooterAlwaysSaysIt) {
  TopFrame t = ranks_frame();  // 101 on GPU 0 outside its visible set: an error
  TopView v;
  v.filter = "gpu:1";
  std::string s = screen_text(render_top(t, {}, v, {}, 80, 24));
  EXPECT_EQ(s.find("outside-visible-set"), std::string::npos) << "a finding of a row the filter hides\n" << s;
  v.filter = "pid:101";
  EXPECT_NE(screen_text(render_top(t, {}, v, {}, 80, 24)).find("outside-visible-set"), std::string::npos);
  // The footer at 80 columns: the keys give way to the filter, never the other way round.
  v.filter = "user:a-rather-long-user-name-for-this";
  std::vector<TopLine> lines = render_top(t, {}, v, {}, 80, 24);
  std::string footer = text_of(lines.back());
  EXPECT_NE(footer.find("filter: user:a-rather-long-user-name-for-this"), std::string::npos) << footer;
  EXPECT_LE(display_width(footer), 80u);
  EXPECT_NE(footer.find("…"), std::string::npos) << footer;  // the keys, cut at a word
  v.message = "sorted by MEM";  // a message keeps the filter too
  EXPECT_NE(text_of(render_top(t, {}, v, {}, 80, 24).back()).find("filter: user:a-rather"), std::string::npos);
}

TEST(TopMessages, TooSmallBreaksBetweenWords) {
  std::vector<TopLine> lines = top_too_small(60, 20);
  ASSERT_GE(lines.size(), 2u);
  std::string joined;
  for (const TopLine& l : lines) {
    std::string t = text_of(l);
    EXPECT_LE(display_width(t), 60u) << t;
    EXPECT_FALSE(t.empty() || t.front() == ' ' || t.back() == ' ') << "[" << t << "]";
    joined += (joined.empty() ? "" : " ") + t;
  }
  EXPECT_EQ(joined, "gpumap top needs at least 80x24; this terminal is 60x20 (q quits)");
}

TEST(TopMessages, AFindingCutAt80ColumnsIsCutAtAWord) {
  TopFrame t = ranks_frame();
  std::string message;
  for (const ProcessRow& r : t.ps.result.rows)
    for (const Finding& f : r.findings)
      if (f.id == "outside-visible-set") message = f.message;
  ASSERT_FALSE(message.empty());
  std::string line;
  for (const TopLine& l : render_top(t, {}, TopView{}, {}, 80, 24))
    if (text_of(l).find("outside-visible-set (pid 101): ") != std::string::npos) line = text_of(l);
  ASSERT_FALSE(line.empty());
  EXPECT_LE(display_width(line), 80u);
  std::string shown = line.substr(line.find("): ") + 3);
  ASSERT_GE(shown.size(), std::string("…").size());
  ASSERT_EQ(shown.substr(shown.size() - std::string("…").size()), "…") << line;
  shown.resize(shown.size() - std::string("…").size());
  ASSERT_EQ(message.rfind(shown, 0), 0u) << line;
  EXPECT_EQ(message[shown.size()], ' ') << "cut inside a word: " << line;
}

TEST(TopMessages, TheStatusLineIsCutAtAWord) {
  TopFrame t = ranks_frame();
  t.cuda_here_error = "CUDA_VISIBLE_DEVICES=GPU-ef612c2c names a GPU twice and the driver refuses the whole list";
  std::string status = text_of(render_top(t, {}, TopView{}, {}, 80, 24)[1]);
  EXPECT_LE(display_width(status), 80u) << status;
  ASSERT_GE(status.size(), std::string("…").size());
  EXPECT_EQ(status.substr(status.size() - std::string("…").size()), "…") << status;
  std::string shown = status.substr(0, status.size() - std::string("…").size());
  std::string whole = "this shell's CUDA_VISIBLE_DEVICES breaks CUDA: " + t.cuda_here_error;
  ASSERT_EQ(whole.rfind(shown, 0), 0u) << status;
  EXPECT_EQ(whole[shown.size()], ' ') << "cut inside a word: " << status;
}

TEST(TopMessages, TheSignalPromptNamesSignalsByLetterAndOnceSaysAll) {
  TopFrame t = ranks_frame();
  TopView v;
  v.prompt = TopView::Prompt::kSignal;
  v.signal_pid = 101;
  std::string footer = text_of(render_top(t, {}, v, {}, 80, 24).back());
  EXPECT_NE(footer.find("signal pid 101: t TERM  k KILL  h HUP  i INT"), std::string::npos) << footer;
  v.signal = SIGKILL;
  footer = text_of(render_top(t, {}, v, {}, 80, 24).back());
  EXPECT_NE(footer.find("send KILL to pid 101? y sends it"), std::string::npos) << footer;
  TopFrame info = ranks_frame({"LOCAL_RANK=0"});
  std::string once = screen_text(render_top(info, {}, TopView{}, {}, 100, 0));
  EXPECT_NE(once.find("info hidden: --all shows"), std::string::npos) << once;
  EXPECT_EQ(once.find("i shows"), std::string::npos) << once;
}

}  // namespace
}  // namespace gpumap
