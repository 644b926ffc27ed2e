#include "output/style.h"

#include <gtest/gtest.h>

#include "output/render.h"

namespace gpumap {
namespace {

Environment env(std::vector<std::string> entries) {
  entries.push_back("TERM=xterm");  // the first TERM wins: a test's own TERM= comes first
  return Environment::from_strings(entries);
}

TEST(TermStyle, TerminalPipeColumnsAndNoColor) {
  TermStyle pipe = make_term_style(false, std::nullopt, env({}), false);
  EXPECT_FALSE(pipe.fit);
  EXPECT_FALSE(pipe.color);
  TermStyle tty = make_term_style(true, 132, env({}), false);
  EXPECT_TRUE(tty.fit);
  EXPECT_TRUE(tty.color);
  EXPECT_EQ(tty.width, 132u);
  EXPECT_EQ(make_term_style(true, 132, env({"COLUMNS=100"}), false).width, 100u);  // COLUMNS wins
  EXPECT_EQ(make_term_style(true, std::nullopt, env({"COLUMNS=abc"}), false).width, 80u);
  EXPECT_EQ(make_term_style(true, std::nullopt, env({"COLUMNS=0"}), false).width, 80u);
  EXPECT_FALSE(make_term_style(true, 80, env({"NO_COLOR=1"}), false).color);
  EXPECT_TRUE(make_term_style(true, 80, env({"NO_COLOR="}), false).color);  // empty NO_COLOR: no effect
  EXPECT_FALSE(make_term_style(true, 80, env({"TERM=dumb"}), false).color);
  TermStyle wide = make_term_style(true, 80, env({}), true);
  EXPECT_FALSE(wide.fit);
  EXPECT_TRUE(wide.color);
}

TEST(TermStyle, ForceColorAndClicolorForceBesideNoColor) {
  for (const char* force : {"FORCE_COLOR", "CLICOLOR_FORCE"}) {
    std::string f = force;
    TermStyle forced = make_term_style(false, std::nullopt, env({f + "=1"}), false);
    EXPECT_TRUE(forced.color) << force << " colours a pipe";
    EXPECT_FALSE(forced.fit) << force << " changes colour only: a pipe keeps full values";
    EXPECT_TRUE(make_term_style(false, std::nullopt, env({f + "=true"}), false).color) << force;
    EXPECT_TRUE(make_term_style(true, 80, env({f + "=1", "TERM=dumb"}), false).color) << force << " beats TERM=dumb";
    EXPECT_FALSE(make_term_style(false, std::nullopt, env({f + "=0"}), false).color) << force << "=0 forces nothing";
    EXPECT_FALSE(make_term_style(false, std::nullopt, env({f + "="}), false).color) << "empty " << force;
    EXPECT_TRUE(make_term_style(true, 80, env({f + "=0"}), false).color) << force << "=0 leaves a terminal coloured";
    // NO_COLOR wins over both (no-color.org; CMake's CLICOLOR_FORCE documents the same order).
    EXPECT_FALSE(make_term_style(false, std::nullopt, env({f + "=1", "NO_COLOR=1"}), false).color) << force;
    EXPECT_FALSE(make_term_style(true, 80, env({"NO_COLOR=1", f + "=1"}), false).color) << force;
    EXPECT_TRUE(make_term_style(false, std::nullopt, env({f + "=1", "NO_COLOR="}), false).color) << force;
  }
}

// Issue 46, item 11: terminal cells, not code points.  A CJK character takes two cells, a
// combining mark none; a cut never leaves half a wide character.
TEST(TermStyle, WidthsAreTerminalCells) {
  EXPECT_EQ(display_width("\u8bad\u7ec3"), 4u);        // 训练
  EXPECT_EQ(display_width("e\u0301"), 1u);              // e + combining acute
  EXPECT_EQ(display_width("\uff21"), 2u);               // fullwidth A
  EXPECT_EQ(display_width("\u2026"), 1u);               // …
  EXPECT_EQ(display_width("a\xff"), 2u);                // a byte that is not UTF-8: one cell
  EXPECT_EQ(ellipsize("\u8bad\u7ec3\u6a21\u578b", 5), "\u8bad\u7ec3\u2026");  // 2 + 2 + 1
  EXPECT_EQ(ellipsize("\u8bad\u7ec3\u6a21\u578b", 6), "\u8bad\u7ec3\u2026");  // the third would end at 7
  EXPECT_EQ(display_width(ellipsize("x\u8bad\u7ec3\u6a21\u578b", 6)), 6u);
  std::string table = render_table({"USER", "COMMAND"}, {{"\u7528\u6237", "\u8bad\u7ec3 a"}, {"bob", "b"}},
                                   TermStyle{.fit = true, .width = 80});
  // The columns line up in cells: "COMMAND" starts at the same cell on every line.
  EXPECT_NE(table.find("USER  COMMAND"), std::string::npos) << table;
  EXPECT_NE(table.find("\u7528\u6237  \u8bad\u7ec3 a"), std::string::npos) << table;  // 4 cells + 2 spaces
  EXPECT_NE(table.find("bob   b"), std::string::npos) << table;
}

TEST(TermStyle, ShortFormsAndEllipsis) {
  EXPECT_EQ(short_uuid("GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b"), "GPU-df9ecf4c\u2026");
  EXPECT_EQ(short_uuid("MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd"), "MIG-d280783e\u2026");
  EXPECT_EQ(short_uuid("GPU-xyz"), "GPU-xyz");
  EXPECT_EQ(short_cell("00000000:5D:00.0"), "5D:00.0");
  EXPECT_EQ(short_cell("0001:5D:00.0"), "0001:5D:00.0");  // another domain stays
  EXPECT_EQ(short_cell("NVIDIA H100 80GB HBM3"), "H100 80GB HBM3");
  EXPECT_EQ(ellipsize("abcdef", 4), "abc\u2026");
  EXPECT_EQ(display_width(ellipsize("abcdef", 4)), 4u);
  EXPECT_EQ(ellipsize("abc", 4), "abc");
  // A MIG name keeps its profile: the model is cut first, then the profile itself.
  EXPECT_EQ(ellipsize_cell("A100-SXM4-80GB MIG 3g.40gb", 20), "A100-SX\u2026 MIG 3g.40gb");
  EXPECT_EQ(ellipsize_cell("A100-SXM4-80GB MIG 3g.40gb", 14), "A\u2026 MIG 3g.40gb");
  EXPECT_EQ(ellipsize_cell("A100-SXM4-80GB MIG 3g.40gb", 13), "MIG 3g.40gb");
  EXPECT_EQ(ellipsize_cell("A100-SXM4-80GB MIG 3g.40gb", 12), "MIG 3g.40gb");
  EXPECT_EQ(ellipsize_cell("A100-SXM4-80GB MIG 3g.40gb", 8), "MIG 3g.\u2026");
  EXPECT_EQ(ellipsize_cell("A100-SXM4-80GB MIG 3g.40gb", 26), "A100-SXM4-80GB MIG 3g.40gb");
  EXPECT_EQ(ellipsize_cell("H100 80GB HBM3", 8), "H100 80\u2026");
}

TEST(TermStyle, WrapsAtWordsWithAHangingIndent) {
  EXPECT_EQ(wrap("one two three four", 12, 2, 4), "  one two\n    three\n    four");
  EXPECT_EQ(wrap("averyveryverylongword x", 8, 0, 2), "averyveryverylongword\n  x");
  EXPECT_EQ(wrap("short", 80, 2, 6), "  short");
}

// Issue 30.7: a command in a note or a prose line is never cut: pasted, it must be one line.
TEST(TermStyle, WrapNeverBreaksACommand) {
  const std::string cmd = "export CUDA_VISIBLE_DEVICES=GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b  # cuda:0 = nvidia-smi GPU 1";
  std::string w = wrap("note: if the indices were meant in CUDA's own order, keep the GPUs it gives now: " + cmd, 80, 6, 8, true);
  EXPECT_EQ(w, "      note: if the indices were meant in CUDA's own order, keep the GPUs it\n"
               "        gives now:\n        " + cmd) << w;
  // Without the flag (a finding's message) words wrap as before.
  EXPECT_NE(wrap("now: " + cmd, 40, 0, 2).find("\n  CUDA_VISIBLE_DEVICES="), std::string::npos);
  // A relaunch line (NAME=value command) and a `quoted command` stay whole; a command that fits stays on its line.
  EXPECT_EQ(wrap("restart it: CUDA_VISIBLE_DEVICES=GPU-1 python3 train.py --lr 0.1", 30, 0, 2, true),
            "restart it:\n  CUDA_VISIBLE_DEVICES=GPU-1 python3 train.py --lr 0.1");
  EXPECT_EQ(wrap("start each rank with `gpumap bind -- <your command>`, then", 30, 0, 2, true),
            "start each rank with\n  `gpumap bind -- <your command>`,\n  then");
  EXPECT_EQ(wrap("then: unset X", 80, 0, 2, true), "then: unset X");
  // Prose that only names a variable is wrapped as prose.
  EXPECT_EQ(wrap("the variable CUDA_VISIBLE_DEVICES=1 is read once", 20, 0, 2, true),
            "the variable\n  CUDA_VISIBLE_DEVICES=1\n  is read once");
}

TEST(TermStyle, TablesFitOnlyWhenAskedAndNeverBelowTheirHeaders) {
  std::vector<std::vector<std::string>> rows = {
      {"cuda:0", "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b", "NVIDIA H100 80GB HBM3 with a long name"}};
  TermStyle pipe;
  EXPECT_NE(render_table({"CUDA", "UUID", "NAME"}, rows, pipe).find("GPU-df9ecf4c-79e5"), std::string::npos);
  TermStyle tty;
  tty.fit = true;
  tty.width = 40;
  std::string t = render_table({"CUDA", "UUID", "NAME"}, rows, tty);
  EXPECT_NE(t.find("GPU-df9ecf4c\u2026"), std::string::npos) << t;
  for (size_t a = 0, b; (b = t.find('\n', a)) != std::string::npos; a = b + 1) EXPECT_LE(display_width(t.substr(a, b - a)), 40u) << t;
  tty.width = 10;  // impossible: columns keep their headers, the terminal wraps
  EXPECT_NE(render_table({"CUDA", "UUID", "NAME"}, rows, tty).find("CUDA"), std::string::npos);
}

TEST(TermStyle, FindingsColourTheirTagAndNeverWrapTheFix) {
  Finding f{"order-differs", Severity::kWarning, "a long message that needs wrapping on a narrow terminal", "export X=1 Y=2"};
  TermStyle tty;
  tty.fit = tty.color = true;
  tty.width = 30;
  std::string s = render_finding(f, "", tty);
  EXPECT_EQ(s.rfind("  \033[33m[warning]\033[0m order-differs:", 0), 0u) << s;
  EXPECT_NE(s.find("\n      "), std::string::npos) << s;
  EXPECT_NE(s.find("      fix: export X=1 Y=2\n"), std::string::npos) << s;
  EXPECT_EQ(render_finding(f, "pid 1", TermStyle{}),
            "  [warning] order-differs (pid 1): a long message that needs wrapping on a narrow terminal\n"
            "      fix: export X=1 Y=2\n");
}

}  // namespace
}  // namespace gpumap
