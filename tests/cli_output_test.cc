// Output for people: on a terminal (a pty here) tables fit its width and severities are coloured;
// into a pipe, or with --wide, every value is whole and no escape code is written.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

const std::string kGpu1 = "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b";  // hosts/seed-mixed.json, nvidia-smi GPU 1

/// Terminal columns of a line: UTF-8 code points, escape sequences (ESC [ ... m) not counted.
size_t columns(const std::string& line) {
  size_t n = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\033') {
      while (i < line.size() && line[i] != 'm') ++i;
      continue;
    }
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  size_t w = 0;
  for (std::string line; std::getline(in, line);) w = std::max(w, columns(line));
  return w;
}

TEST(CliOutput, TerminalTablesFit80ColumnsWithShortUuidsAndColouredSeverities) {
  for (const char* cmd : {"map", "list", "doctor"}) {
    CliRun r = gpumap_tty({cmd, "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=xterm"});
    EXPECT_LE(widest_line(r.out), 80u) << cmd << ":\n" << r.out;
    EXPECT_EQ(r.out.find(kGpu1), std::string::npos) << cmd << ": a full UUID on an 80-column terminal\n" << r.out;
  }
  CliRun map = gpumap_tty({"map", "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=xterm"});
  EXPECT_NE(map.out.find("GPU-df9ecf4c\u2026"), std::string::npos) << map.out;
  EXPECT_NE(map.out.find("\033[33m[warning]\033[0m"), std::string::npos) << map.out;
  // The fix line is never wrapped: it is pasted.
  EXPECT_NE(map.out.find("      fix: export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"), std::string::npos) << map.out;
  // The short form is accepted back as a GPU argument.
  EXPECT_EQ(gpumap_here({"which", "--simulate", "seed-mixed", "GPU-df9ecf4c"}).code, 0);
}

// At 80 columns the model stays whole in `list` (the point on a box of mixed GPUs: the bus id
// goes first) and a MIG device's name keeps its profile in `map` (the model is cut instead).
TEST(CliOutput, NamesStayReadableAt80Columns) {
  CliRun list = gpumap_tty({"list", "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=xterm"});
  EXPECT_LE(widest_line(list.out), 80u) << list.out;
  EXPECT_NE(list.out.find("H100 80GB HBM3 "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("A100-SXM4-80GB "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("GPU-df9ecf4c\u2026"), std::string::npos) << "the UUID prefix stays:\n" << list.out;
  EXPECT_EQ(list.out.find("PCI BUS ID"), std::string::npos) << list.out;
  CliRun map = gpumap_tty({"map", "--simulate", "mig"}, {"COLUMNS=80", "TERM=xterm"});
  EXPECT_LE(widest_line(map.out), 80u) << map.out;
  EXPECT_NE(map.out.find("\u2026 MIG 3g.40gb "), std::string::npos) << map.out;
  CliRun wide = gpumap_tty({"list", "--simulate", "seed-mixed"}, {"COLUMNS=160", "TERM=xterm"});
  EXPECT_NE(wide.out.find("PCI BUS ID"), std::string::npos) << "room enough: every column\n" << wide.out;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// which, pick and verify at 80 columns (issue 22 point 10): prose wraps at words with an indent,
// no line is wider than 80 but the lines to paste (exports, docker run, verify's fix), and no word
// is split: the words are those of the pipe's one-line-per-paragraph output, in order.
TEST(CliOutput, WhichPickAndVerifyProseWrapsAtWordsAt80Columns) {
  const std::vector<std::vector<std::string>> runs = {
      {"which", "--simulate", "seed-mixed", "1", "2"},
      {"which", "--simulate", "seed-mixed", "cuda:1", "--env", "CUDA_VISIBLE_DEVICES=3,1"},
      {"which", "--simulate", "dgx8", "--env", "NVIDIA_VISIBLE_DEVICES=2,3", "1"},
      {"pick", "--simulate", "seed-mixed", "--gpus", "2"},
      {"verify", "--simulate", "seed-mixed", "--expect", "1", "--env", "CUDA_VISIBLE_DEVICES=2"},
      {"verify", "--simulate", "seed-mixed", "--expect", "1,2", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "--env",
       "CUDA_VISIBLE_DEVICES=1,2"}};
  for (const std::vector<std::string>& args : runs) {
    std::string what;
    for (const std::string& a : args) what += " " + a;
    CliRun tty = gpumap_tty(args, {"COLUMNS=80", "TERM=xterm"});
    CliRun pipe = gpumap_here(args);
    ASSERT_EQ(tty.code, pipe.code) << what << "\n" << tty.out << tty.err;
    // The terminal shows stderr too: the SIMULATED line (wrapped, ending "machine's GPUs") is not the
    // prose compared with the pipe's stdout.
    if (size_t m = tty.out.find("gpumap: SIMULATED host"); m != std::string::npos) {
      size_t end = tty.out.find("machine's GPUs", m);
      if (end != std::string::npos) tty.out.erase(m, tty.out.find('\n', end) + 1 - m);
    }
    size_t wrapped = 0;
    std::istringstream in(tty.out);
    for (std::string line; std::getline(in, line);) {
      bool paste = line.rfind("  export ", 0) == 0 || line.rfind("  docker run ", 0) == 0 || line.rfind("export ", 0) == 0 ||
                   line.rfind("fix (before CUDA starts): ", 0) == 0;
      if (!paste) { EXPECT_LE(columns(line), 80u) << what << ": " << line << "\n" << tty.out; }
      wrapped += line.rfind("    ", 0) == 0 && line.find("export") == std::string::npos;
    }
    EXPECT_EQ(words(tty.out), words(pipe.out)) << what << ": a word split or lost\n" << tty.out << "\n---\n" << pipe.out;
    if (args[0] == "which") { EXPECT_GT(wrapped, 0u) << what << ": nothing wrapped with a hanging indent\n" << tty.out; }
  }
}

TEST(CliOutput, ColumnsIsHonoured) {
  CliRun wide = gpumap_tty({"map", "--simulate", "seed-mixed"}, {"COLUMNS=200", "TERM=xterm"});
  EXPECT_NE(wide.out.find(kGpu1), std::string::npos) << "a 200-column terminal has room for the UUIDs\n" << wide.out;
  CliRun narrow = gpumap_tty({"doctor", "--simulate", "seed-mixed", "--env", "CUDA_VISIBLE_DEVICES=1,0"},
                             {"COLUMNS=60", "TERM=xterm"});
  EXPECT_LE(widest_line(narrow.out.substr(0, narrow.out.find("fix:"))), 60u) << narrow.out;
}

TEST(CliOutput, NoColorAndDumbTerminalsGetNoEscapeCodes) {
  CliRun r = gpumap_tty({"map", "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=xterm", "NO_COLOR=1"});
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[warning]"), std::string::npos) << r.out;
  CliRun dumb = gpumap_tty({"map", "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=dumb"});
  EXPECT_EQ(dumb.out.find('\033'), std::string::npos) << dumb.out;
  // NO_COLOR set but empty does not count (no-color.org).
  CliRun empty = gpumap_tty({"map", "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=xterm", "NO_COLOR="});
  EXPECT_NE(empty.out.find("\033[33m"), std::string::npos) << empty.out;
}

// FORCE_COLOR (force-color.org) and CLICOLOR_FORCE (bixense.com/clicolors) colour a pipe; NO_COLOR
// still wins (no-color.org; CMake documents the same order for CLICOLOR_FORCE).
TEST(CliOutput, ForceColorColoursAPipeUnlessNoColor) {
  for (const char* force : {"FORCE_COLOR=1", "CLICOLOR_FORCE=1"}) {
    CliRun forced = gpumap_here({"map", "--simulate", "seed-mixed"}, {"TERM=dumb", force});
    EXPECT_EQ(forced.code, 0) << forced.err;
    EXPECT_NE(forced.out.find("\033[33m[warning]\033[0m"), std::string::npos) << force << "\n" << forced.out;
    EXPECT_NE(forced.out.find(kGpu1), std::string::npos) << "colour only: a pipe keeps full values\n" << forced.out;
    CliRun json = gpumap_here({"map", "--simulate", "seed-mixed", "--json"}, {force});
    EXPECT_EQ(json.out.find('\033'), std::string::npos) << "JSON is never coloured\n" << json.out;
    CliRun none = gpumap_here({"map", "--simulate", "seed-mixed"}, {force, "NO_COLOR=1"});
    EXPECT_EQ(none.out.find('\033'), std::string::npos) << force << " with NO_COLOR=1\n" << none.out;
    std::string zero = std::string(force).substr(0, std::string(force).find('=')) + "=0";
    CliRun off = gpumap_here({"map", "--simulate", "seed-mixed"}, {zero});
    EXPECT_EQ(off.out.find('\033'), std::string::npos) << zero << "\n" << off.out;
  }
}

TEST(CliOutput, PipesAndWideGetEveryValueWhole) {
  CliRun pipe = gpumap_here({"map", "--simulate", "seed-mixed"}, {"COLUMNS=80", "TERM=xterm"});
  EXPECT_NE(pipe.out.find(kGpu1), std::string::npos) << pipe.out;
  EXPECT_NE(pipe.out.find("NVIDIA H100 80GB HBM3"), std::string::npos) << pipe.out;
  EXPECT_EQ(pipe.out.find('\033'), std::string::npos) << pipe.out;
  EXPECT_EQ(pipe.out.find("\u2026"), std::string::npos) << pipe.out;
  EXPECT_GT(widest_line(pipe.out), 80u);  // a finding stays on one line for grep
  CliRun wide = gpumap_tty({"map", "--simulate", "seed-mixed", "--wide"}, {"COLUMNS=80", "TERM=xterm"});
  EXPECT_NE(wide.out.find(kGpu1), std::string::npos) << wide.out;
  EXPECT_EQ(wide.out.find("\u2026"), std::string::npos) << wide.out;
}

TEST(CliOutput, PsWatchIntoAPipeHasNoEscapeCodesAndTakesFractions) {
  CliRun r = run_program({"/usr/bin/timeout", "-s", "INT", "1", GPUMAP_BINARY, "ps", "--simulate", "h200x2", "--watch", "0.2"},
                         {"TERM=xterm"});
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << r.out;
  size_t frames = 0;
  for (size_t p = r.out.find("SIMULATED host"); p != std::string::npos; p = r.out.find("SIMULATED host", p + 1)) ++frames;
  EXPECT_GE(frames, 2u) << r.out;
  // On a terminal it redraws in place.
  CliRun tty = run_program({"/usr/bin/script", "-qec",
                            "/usr/bin/timeout -s INT 1 '" + std::string(GPUMAP_BINARY) + "' ps --simulate h200x2 --watch 0.2",
                            "/dev/null"},
                           {"TERM=xterm"});
  EXPECT_NE(tty.out.find("\033[H\033[2J"), std::string::npos) << tty.out;
  CliRun bad = gpumap_here({"ps", "--simulate", "h200x2", "--watch", "0.05"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("from 0.1 to 86400"), std::string::npos) << bad.err;
  EXPECT_NE(gpumap_here({"ps", "--help"}).out.find("0.1 to 86400"), std::string::npos);
}

}  // namespace
}  // namespace gpumap::testing
