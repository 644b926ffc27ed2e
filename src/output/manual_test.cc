#include "output/manual.h"

#include <gtest/gtest.h>

#include <sstream>

#include "fake_session.h"

namespace gpumap {
namespace {

CliReference tiny() {
  CliReference r;
  r.version = "9.9.9";
  r.commit_date = "2026-11-30";
  r.summary = "a tool";
  r.default_command = "go";
  r.top_options = {{"--version", {"-V"}, false, false, "", "print the version"}};
  r.common_options = {{"--help", {"-h"}, false, false, "", "show [this] help"},
                      {"--simulate", {}, true, false, "HOST", "a host"}};
  r.commands = {{"go", "go somewhere", "gpumap go [--to PLACE]", ".starts with a dot\n\nit's a \\ backslash -> \xE2\x86\x92",
                 {{"--to", {}, true, true, "PLACE", "where: don't stop"}, {"--mode", {}, true, false, "fast|slow", "how"}},
                 false, false},
                {"exec", "run CMD", "gpumap exec -- CMD", "", {}, false, true}};
  r.exit_codes = {{0, "ok", "fine"}, {2, "usage", "bad usage"}, {7, "found", "found errors", {"go", "exec"}}};
  r.environment = {{"GPUMAP_X", "an x", {"seams"}}, {"CUDA_Y", "a y", {"environment", "seams"}}};
  r.environment_groups = {{"environment", "Reasoned about"}, {"seams", "Settings"}};
  return r;
}

TEST(DescribeFormats, EachReferenceFormatAndNoOther) {
  EXPECT_EQ(reference_text(tiny(), "man"), man_page(tiny()));
  EXPECT_EQ(reference_text(tiny(), "fish"), fish_completion(tiny()));
  EXPECT_EQ(reference_text(tiny(), "json"), reference_json(tiny()).dump(2) + "\n");
  EXPECT_FALSE(reference_text(tiny(), "yaml"));
  EXPECT_FALSE(reference_text(tiny(), "gpus"));  // not the reference's: __describe asks the session
}

TEST(DescribeFormats, GpuWordsAreIndicesThenUuidsThenMigDevices) {
  testing::FakeSession f("mig");
  const Snapshot& s = f.session().snapshot();
  std::vector<std::string> words;
  std::istringstream in(completion_gpu_words(s));
  for (std::string w; std::getline(in, w);) words.push_back(w);
  size_t migs = 0;
  for (const Gpu& g : s.gpus) migs += g.mig_devices.size();
  ASSERT_GT(migs, 0u);
  ASSERT_EQ(words.size(), 2 * s.gpus.size() + migs);
  EXPECT_EQ(words[0], "0");
  EXPECT_EQ(words[s.gpus.size()], s.gpus[0].uuid);
  EXPECT_EQ(words.back().rfind("MIG-", 0), 0u) << words.back();
}

TEST(RoffEscape, MinusBackslashBacktickAndUnicode) {
  EXPECT_EQ(roff_escape("--env"), "\\-\\-env");
  EXPECT_EQ(roff_escape("start-up"), "start-up");  // a hyphen between letters stays a hyphen
  EXPECT_EQ(roff_escape("a -1"), "a \\-1");
  EXPECT_EQ(roff_escape("C:\\x"), "C:\\ex");
  EXPECT_EQ(roff_escape("`map`"), "\\(gamap\\(ga");
  EXPECT_EQ(roff_escape("a \xE2\x86\x92 b"), "a \\[u2192] b");
  EXPECT_EQ(roff_escape("\xC3\xA9"), "\\[u00E9]");
  EXPECT_EQ(roff_escape("bad \xE2 byte"), "bad \\[uFFFD] byte");  // truncated sequence
}

TEST(ManPage, SectionsEscapingAndNoRawNonAscii) {
  std::string m = man_page(tiny());
  EXPECT_EQ(m.rfind(".\\\"", 0), 0u);
  EXPECT_NE(m.find(".TH GPUMAP 1 \"2026-11-30\" \"gpumap 9.9.9\""), std::string::npos);
  EXPECT_NE(m.find("\n.SS go\n"), std::string::npos);
  EXPECT_NE(m.find("\\&.starts with a dot"), std::string::npos) << "a leading dot would be a roff request";
  EXPECT_NE(m.find("\n.PP\nit's a \\e backslash \\-> \\[u2192]\n"), std::string::npos) << m;
  EXPECT_NE(m.find("\\fB\\-\\-to\\fR \\fIPLACE\\fR\nwhere: don't stop (repeatable)"), std::string::npos) << m;
  EXPECT_NE(m.find(".TP 6\n.B exec\nrun CMD\n"), std::string::npos) << "commands listed with the widest name's indent";
  EXPECT_NE(m.find("\\fB\\-h\\fR, \\fB\\-\\-help\\fR"), std::string::npos);
  EXPECT_NE(m.find(".SH EXIT STATUS\n.TP\n.B 0\nfine\n.TP\n.B 2\nbad usage\n.TP\n.B 7\nfound errors (go, exec)\n"),
            std::string::npos)
      << "each code names the commands that use it";
  // Each variable once, under the heading of its first reader.
  EXPECT_NE(m.find(".SH ENVIRONMENT\n.SS Reasoned about\n.TP\n.B CUDA_Y\na y\n.SS Settings\n.TP\n.B GPUMAP_X\nan x\n"),
            std::string::npos)
      << m;
  for (char c : m) EXPECT_LT(static_cast<unsigned char>(c), 0x80);
}

TEST(BashCompletion, ArmsPerCommandWithValueCompletion) {
  std::string b = bash_completion(tiny());
  EXPECT_NE(b.find("compgen -W 'go exec help'"), std::string::npos);
  EXPECT_NE(b.find("    go)\n      case $prev in\n        --to) COMPREPLY=()"), std::string::npos) << b;
  EXPECT_NE(b.find("--mode) COMPREPLY=($(compgen -W 'fast slow' -- \"$cur\"))"), std::string::npos);
  EXPECT_NE(b.find("--simulate) COMPREPLY=($(compgen -W \"$(_gpumap_hosts)\""), std::string::npos);
  EXPECT_NE(b.find("opts='--to --mode --help -h --simulate'"), std::string::npos) << b;
  // Before any command: the default command's options and --version.
  EXPECT_NE(b.find("opts='--to --mode --help -h --simulate --version -V'"), std::string::npos);
  EXPECT_NE(b.find("complete -F _gpumap gpumap\n"), std::string::npos);
}

TEST(ZshCompletion, SpecsEscapeBracketsQuotesAndColons) {
  std::string z = zsh_completion(tiny());
  EXPECT_EQ(z.rfind("#compdef gpumap\n", 0), 0u);
  EXPECT_NE(z.find("'--help[show \\[this\\] help]'"), std::string::npos) << z;
  EXPECT_NE(z.find("'*--to=[where\\: don'\\''t stop]:PLACE: '"), std::string::npos) << z;
  EXPECT_NE(z.find("'--mode=[how]:fast|slow:(fast slow)'"), std::string::npos);
  EXPECT_NE(z.find("'--simulate=[a host]:HOST:_gpumap_hosts'"), std::string::npos);
  EXPECT_NE(z.find("'--[the command to run follows]'"), std::string::npos);  // exec takes -- CMD
  EXPECT_NE(z.find("    'go:go somewhere'\n"), std::string::npos);
}

TEST(WrapSynopsis, BreaksBetweenBracketGroupsWithAHangingIndent) {
  EXPECT_EQ(wrap_synopsis("gpumap go [--to PLACE] [--mode fast|slow]", 80), "gpumap go [--to PLACE] [--mode fast|slow]");
  EXPECT_EQ(wrap_synopsis("gpumap go [--to PLACE] [--mode fast|slow]", 30), "gpumap go [--to PLACE]\n          [--mode fast|slow]");
  // A group wider than a line breaks at its own spaces; every line fits.
  std::string w = wrap_synopsis("gpumap list [--json | --query-gpu=FIELDS [--format=csv[,noheader][,nounits]]] [--wide]", 50);
  std::istringstream in(w);
  for (std::string l; std::getline(in, l);) EXPECT_LE(l.size(), 50u) << w;
  EXPECT_NE(w.find("--query-gpu=FIELDS"), std::string::npos) << w;
  EXPECT_EQ(wrap_synopsis("gpumap a [X]\ngpumap b [Y]", 80), "gpumap a [X]\ngpumap b [Y]");  // its own lines kept
}

TEST(WrapSynopsis, ALineOfMoreOptionGroupsContinuesTheFormAbove) {
  EXPECT_EQ(wrap_synopsis("gpumap ps [--user U]\n       [--json | --query=F]\n    [--watch S]", 80),
            "gpumap ps [--user U] [--json | --query=F] [--watch S]");
  EXPECT_EQ(wrap_synopsis("gpumap ps [--user U]\n       [--json | --query=F]", 30),
            "gpumap ps [--user U]\n          [--json | --query=F]");
}

TEST(FillText, JoinsAParagraphsLinesAndFillsThemAgain) {
  EXPECT_EQ(fill_text("one two\nthree four five", 80), "one two three four five");
  EXPECT_EQ(fill_text("one two three four five", 9), "one two\nthree\nfour five");
  // A sentence's two spaces stay inside a line, and one that ended a line gets them back.
  EXPECT_EQ(fill_text("It is.  So\nit goes.\nwell", 80), "It is.  So it goes.  well");
  EXPECT_EQ(fill_text("It is.  So it goes", 8), "It is.\nSo it\ngoes");
  // A word wider than the line keeps its own line, never split.
  EXPECT_EQ(fill_text("a --query-gpu=index,uuid b", 6), "a\n--query-gpu=index,uuid\nb");
}

TEST(FillText, KeepsTheBreaksTheTextMeans) {
  // A blank line, an indented example (kept exactly), a list item (hanging by two).
  EXPECT_EQ(fill_text("one\ntwo\n\nthree", 80), "one two\n\nthree");
  EXPECT_EQ(fill_text("run it:\n    gpumap run --gpus 2 -- python train.py\nand\nthen", 20),
            "run it:\n    gpumap run --gpus 2 -- python train.py\nand then");
  EXPECT_EQ(fill_text("items:\n- one two three\n  four\n- five", 12), "items:\n- one two\n  three four\n- five");
  // A new thought after a sentence or a colon starts its own line; a lower-case word joins.
  EXPECT_EQ(fill_text("First.\n--watch does this.\nThen that:\n`x` here\nso on.\nand on", 80),
            "First.\n--watch does this.\nThen that:\n`x` here so on.  and on");
  EXPECT_EQ(indent_lines("a\nb\nc", 3), "a\n   b\n   c");
}

TEST(FishCompletion, CommandsOptionsValuesAndSubcommands) {
  CliReference r = tiny();
  r.commands[0].subcommands = {"up", "down"};
  r.commands[0].options.push_back({"--env", {}, true, true, "NAME=VALUE", "set"});
  std::string f = fish_completion(r);
  EXPECT_NE(f.find("complete -c gpumap -n __gpumap_first -a go -d 'go somewhere'\n"), std::string::npos) << f;
  EXPECT_NE(f.find("complete -c gpumap -n '__gpumap_using go' -l to -x -d 'where: don\\'t stop'\n"), std::string::npos) << f;
  EXPECT_NE(f.find("-n '__gpumap_using go' -l mode -x -a 'fast slow' -d 'how'\n"), std::string::npos) << f;
  EXPECT_NE(f.find("-n '__gpumap_using go' -s h -l help -d 'show [this] help'"), std::string::npos) << f;
  EXPECT_NE(f.find("-l simulate -r -F -a '(__gpumap_hosts)'"), std::string::npos) << f;
  EXPECT_NE(f.find("complete -c gpumap -n '__gpumap_second go' -a up\n"), std::string::npos) << f;
  EXPECT_NE(f.find("-l env -x -a '(__gpumap_env =)'"), std::string::npos) << f;
  EXPECT_NE(f.find("    set -l known CUDA_Y\n"), std::string::npos) << "--env completes the reasoned-about variables\n" << f;
  EXPECT_NE(f.find("-n '__gpumap_first' -s V -l version"), std::string::npos) << f;
}

TEST(ReferenceJson, CarriesEverything) {
  nlohmann::ordered_json j = reference_json(tiny());
  EXPECT_EQ(j["commands"][0]["options"][0]["repeatable"], true);
  EXPECT_EQ(j["commands"][1]["runs_command"], true);
  EXPECT_EQ(j["top_options"][0]["aliases"][0], "-V");
  EXPECT_EQ(j["exit_codes"][1]["code"], 2);
  EXPECT_EQ(j["environment"][0]["name"], "GPUMAP_X");
  EXPECT_EQ(j["environment"][1]["read_by"][1], "seams");
  EXPECT_EQ(j["exit_codes"][2]["commands"][1], "exec");
}

// Issue 43: a command that refuses a common option (top, metrics, serve: --json) has it in no
// listing: not its help --json entry, not its completion, and the man page says so.
TEST(CommonRefused, NoListingShowsARefusedCommonOption) {
  CliReference r = tiny();
  r.commands[1].common_refused = {"--simulate"};
  nlohmann::ordered_json j = reference_json(r);
  EXPECT_EQ(j["commands"][0]["common_options"], nlohmann::ordered_json({"--help", "--simulate"}));
  EXPECT_EQ(j["commands"][1]["common_options"], nlohmann::ordered_json({"--help"}));
  std::string man = man_page(r);
  EXPECT_NE(man.find("Takes no \\-\\-simulate.\n"), std::string::npos) << man;
  EXPECT_NE(man.find("a host (not exec)"), std::string::npos) << man;
  std::string fish = fish_completion(r);
  EXPECT_NE(fish.find("-n '__gpumap_using go' -l simulate"), std::string::npos) << fish;
  EXPECT_EQ(fish.find("-n '__gpumap_using exec' -l simulate"), std::string::npos) << fish;
  std::string bash = bash_completion(r);
  ASSERT_NE(bash.find("    exec)\n"), std::string::npos) << bash;
  std::string exec_arm = bash.substr(bash.find("    exec)\n"));
  exec_arm = exec_arm.substr(0, exec_arm.find(";;"));
  EXPECT_EQ(exec_arm.find("--simulate"), std::string::npos) << exec_arm;
}

}  // namespace
}  // namespace gpumap
