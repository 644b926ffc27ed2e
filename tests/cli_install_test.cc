// Installing gpumap like a real tool: --version, the man page and the shell completion
// generated from the command table (every command and option in each, and each one usable),
// `cmake --install` into a prefix and a DESTDIR, the relocated binary, and uninstall.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "output/style.h"

namespace gpumap::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kBuild = GPUMAP_BUILD_DIR;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// bash -c SCRIPT with a clean environment.
ProcResult sh(const std::string& script, const std::vector<std::string>& env = {}) {
  std::vector<std::string> e = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"};
  e.insert(e.end(), env.begin(), env.end());
  ProcResult r = run_capture({"/bin/bash", "-c", script}, e, 120000);
  EXPECT_FALSE(r.timed_out) << script;
  return r;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

json describe() {
  CliRun r = gpumap_here({"__describe", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

// Every option word a command takes: its own, the common ones it takes (its "common_options":
// top, metrics and serve take no --json), and their aliases.
std::vector<std::string> option_words(const json& d, const json& cmd) {
  std::vector<std::string> out;
  const json& taken = cmd["common_options"];
  for (const json* list : {&cmd["options"], &d["common_options"]})
    for (const json& o : *list) {
      if (list != &cmd["options"] && std::find(taken.begin(), taken.end(), o["name"]) == taken.end()) continue;
      out.push_back(o["name"]);
      for (const json& a : o["aliases"]) out.push_back(a);
    }
  return out;
}

std::set<std::string> lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.insert(l);
  return out;
}

// The text between `start` and the next `end` marker (or the end).
std::string section(const std::string& text, const std::string& start, const std::string& end) {
  size_t a = text.find(start);
  if (a == std::string::npos) return "";
  size_t b = text.find(end, a + start.size());
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

std::string roff_option(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return "\\fB" + out + "\\fR";
}

TEST(Version, NamesTheVersionAndTheCommitItWasBuiltFrom) {
  CliRun r = gpumap({"--version"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.out, m, std::regex(R"(gpumap (\d+\.\d+\.\d+) \(commit ([0-9a-f]{40}(-dirty)?|unknown)(, \d{4}-\d\d-\d\d)?\)\n)")))
      << r.out;
  ProcResult head = sh("git -C " + quote(GPUMAP_SOURCE_DIR) + " rev-parse HEAD 2>/dev/null");
  if (head.exit_code == 0 && !head.out.empty()) {
    EXPECT_EQ(m[2].str().substr(0, 40), head.out.substr(0, 40)) << "built from this checkout's HEAD";
  } else {
    EXPECT_EQ(m[2].str(), "unknown");
  }

  CliRun j = gpumap({"--version", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json v = json::parse(j.out);
  EXPECT_EQ(v["version"], m[1].str());
  EXPECT_EQ(v["commit"], m[2].str());
  EXPECT_EQ(gpumap({"-V"}).out, r.out);
  CliRun bad = gpumap({"--version", "--bogus"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--bogus"), std::string::npos) << bad.err;
  // Issue 53: --version in any position (a `--simulate X` left in a command line exited 2), the
  // other options still checked; never a word after `--` (the program's own --version).
  for (std::vector<std::string> argv : {std::vector<std::string>{"--simulate", "h200x2", "--version"},
                                        {"list", "--version"}, {"--simulate=dgx8", "map", "-V"}, {"ps", "--version", "--json"}}) {
    CliRun any = gpumap(argv);
    EXPECT_EQ(any.code, 0) << argv.back() << ": " << any.err;
    EXPECT_EQ(any.out, argv.back() == "--json" ? j.out : r.out) << any.out;
  }
  EXPECT_EQ(gpumap({"list", "--version", "--bogus"}).code, 2);
  CliRun passed = gpumap({"run", "--simulate", "h200x2", "--", "/bin/sh", "-c", "echo \"$0\"", "--version"},
                         {"GPUMAP_LOCK_DIR=" + temp_dir("locks")});
  EXPECT_EQ(passed.out, "--version\n") << passed.err;
}

// The version script outside git, and inside someone else's repository (an unpacked tarball in a
// packaging repo): "unknown", never that repository's commit.  A packager's commit wins.
TEST(Version, UnknownOutsideThisTreesOwnGitCheckout) {
  std::string t = temp_dir("version");
  std::string run_script = std::string("cmake -DSOURCE_DIR=\"$1\" -DOUT=\"$2\" -DTEMPLATE=") +
                           quote(std::string(GPUMAP_SOURCE_DIR) + "/cmake/version.cc.in") +
                           " -DGIT_EXECUTABLE=git $3 -P " + quote(std::string(GPUMAP_SOURCE_DIR) + "/cmake/gpumap_version.cmake");
  auto version_of = [&](const std::string& src, const std::string& extra) {
    ProcResult r = sh("set -e; run() { " + run_script + "; }; run " + quote(src) + " " + quote(t + "/v.cc") + " " +
                      quote(extra) + "; grep -o 'return \"[^\"]*\"' " + quote(t + "/v.cc") + " | head -1");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  ProcResult init = sh("set -e; cd " + quote(t) + "; mkdir -p repo/tarball; cd repo; git init -q .; "
                       "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x");
  ASSERT_EQ(init.exit_code, 0) << init.err;
  fs::create_directories(t + "/plain");
  EXPECT_EQ(version_of(t + "/plain", ""), "return \"unknown\"\n");
  EXPECT_EQ(version_of(t + "/repo/tarball", ""), "return \"unknown\"\n");
  EXPECT_NE(version_of(t + "/repo", ""), "return \"unknown\"\n");  // its own repository: the commit
  EXPECT_EQ(version_of(t + "/plain", "-DGPUMAP_GIT_COMMIT=deadbeef"), "return \"deadbeef\"\n");
  // Issue 53: the release passes the commit's date too, so --version prints it as install.md says.
  ProcResult dated = sh("set -e; run() { " + run_script + "; }; run " + quote(t + "/plain") + " " + quote(t + "/v.cc") +
                        " '-DGPUMAP_GIT_COMMIT=deadbeef -DGPUMAP_GIT_COMMIT_DATE=2026-12-01'; grep -c 'return \"2026-12-01\"' " +
                        quote(t + "/v.cc"));
  EXPECT_EQ(dated.out, "1\n") << dated.err;
  fs::remove_all(t);
}

TEST(Describe, ListsTheVisibleCommandsOfTheHelp) {
  const json d = describe();
  std::set<std::string> described;
  for (const json& c : d["commands"]) described.insert(c["name"]);
  CliRun help = gpumap_here({"--help"});
  std::set<std::string> listed;
  std::string cmds = section(help.out, "commands:\n", "\n\n");
  std::istringstream in(cmds.substr(cmds.find('\n') + 1));
  for (std::string l; std::getline(in, l);)
    if (l.rfind("   ", 0) != 0) listed.insert(l.substr(2, l.find(' ', 2) - 2));  // not a summary's next line
  EXPECT_EQ(described, listed);
  EXPECT_EQ(described.count("__probe"), 0u);
  EXPECT_EQ(described.count("__describe"), 0u);
  EXPECT_GE(d["exit_codes"].size(), 8u);
  EXPECT_EQ(gpumap_here({"__describe", "--format", "yaml"}).code, 2);
}

// The files the build generated (and installs) are what the command table says now.
TEST(Manual, GeneratedFilesAreUpToDate) {
  for (auto [format, path] : {std::pair{"man", "/man/gpumap.1"}, {"bash", "/completion/bash/gpumap"},
                              {"zsh", "/completion/zsh/_gpumap"}, {"fish", "/completion/fish/gpumap.fish"}}) {
    CliRun r = gpumap_here({"__describe", "--format", format});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_file(kBuild + path), r.out) << path << " is stale: rebuild the gpumap_manual target";
  }
}

TEST(Manual, ManPageHasEveryCommandOptionExitCodeAndVariable) {
  const json d = describe();
  std::string man = read_file(kBuild + "/man/gpumap.1");
  for (const json& c : d["commands"]) {
    std::string name = c["name"];
    std::string sec = section(man, "\n.SS " + name + "\n", "\n.S");
    ASSERT_FALSE(sec.empty()) << "no section for " << name;
    for (const json& o : c["options"]) EXPECT_NE(sec.find(roff_option(o["name"])), std::string::npos) << name << " " << o["name"];
    EXPECT_NE(section(man, "\n.SH DESCRIPTION\n", "\n.SH").find("\n.B " + name + "\n"), std::string::npos)
        << name << " missing from DESCRIPTION";
  }
  std::string common = section(man, "\n.SH COMMON OPTIONS\n", "\n.SH");
  for (const json& o : d["common_options"]) EXPECT_NE(common.find(roff_option(o["name"])), std::string::npos) << o["name"];
  EXPECT_NE(common.find(roff_option("--version")), std::string::npos);
  std::string exits = section(man, "\n.SH EXIT STATUS\n", "\n.SH");
  for (const json& e : d["exit_codes"]) {
    std::string entry = section(exits, ".B " + std::to_string(e["code"].get<int>()) + "\n", ".TP");
    ASSERT_FALSE(entry.empty()) << e;
    for (const json& c : e["commands"]) EXPECT_NE(entry.find(c.get<std::string>()), std::string::npos) << e;
  }
  std::string env = section(man, "\n.SH ENVIRONMENT\n", "\n.SH");
  for (const json& v : d["environment"]) {
    std::string name = v["name"];
    EXPECT_NE(env.find(".TP\n.B " + name + "\n"), std::string::npos) << name;
  }
}

// The cells of the markdown table that starts after `heading` (up to its first blank line).
std::vector<std::vector<std::string>> markdown_rows(const std::string& text, const std::string& heading) {
  std::vector<std::vector<std::string>> out;
  std::string sec = section(text, heading, "\n## ");
  std::istringstream in(sec.substr(std::min(sec.size(), sec.find("\n|"))));
  bool header = true;
  for (std::string l; std::getline(in, l);) {
    if (l.empty()) {
      if (!out.empty() || !header) break;
      continue;
    }
    if (l[0] != '|') break;
    if (l.rfind("|---", 0) == 0) {
      header = false;
      continue;
    }
    if (header) continue;
    std::vector<std::string> cells;
    std::istringstream row(l.substr(1));
    for (std::string c; std::getline(row, c, '|');) cells.push_back(c);
    out.push_back(cells);
  }
  return out;
}

std::vector<std::string> backticked(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a + 1)) {
    size_t b = cell.find('`', a + 1);
    if (b == std::string::npos) break;
    out.push_back(cell.substr(a + 1, b - a - 1));
    a = b;
  }
  return out;
}

// docs/cli.md's table of variables is the code's: the same names, each read by the same readers.
TEST(Manual, DocsListEveryVariableTheCodeReadsWithItsReaders) {
  const json d = describe();
  std::map<std::string, std::string> code, docs;
  for (const json& v : d["environment"]) {
    std::string readers;
    for (const json& r : v["read_by"]) readers += (readers.empty() ? "" : ", ") + r.get<std::string>();
    code[v["name"]] = readers;
  }
  std::string cli_md = read_file(std::string(GPUMAP_SOURCE_DIR) + "/docs/cli.md");
  auto rows = markdown_rows(cli_md, "\n## Environment variables gpumap reads\n");
  ASSERT_FALSE(rows.empty()) << "no table under docs/cli.md's \"Environment variables gpumap reads\"";
  for (const auto& cells : rows) {
    ASSERT_GE(cells.size(), 2u);
    std::string readers = cells[1].substr(cells[1].find_first_not_of(' '));
    readers = readers.substr(0, readers.find_last_not_of(' ') + 1);
    for (const std::string& name : backticked(cells[0])) EXPECT_TRUE(docs.emplace(name, readers).second) << name << " twice";
  }
  EXPECT_EQ(docs, code) << "docs/cli.md and src/model/env_vars.h disagree";
}

// docs/cli.md's exit code table names every command the command table says uses each code.
TEST(Manual, DocsExitCodesNameTheirCommands) {
  const json d = describe();
  std::string cli_md = read_file(std::string(GPUMAP_SOURCE_DIR) + "/docs/cli.md");
  auto rows = markdown_rows(cli_md, "\n## Exit codes\n");
  ASSERT_EQ(rows.size(), d["exit_codes"].size());
  for (const json& e : d["exit_codes"]) {
    int code = e["code"];
    ASSERT_EQ(std::stoi(rows[code][0]), code);
    for (const json& c : e["commands"])
      EXPECT_NE(rows[code][1].find("`" + c.get<std::string>()), std::string::npos) << "exit " << code << " omits " << c;
  }
}

TEST(Manual, GroffRendersTheManPageWithoutWarnings) {
  std::string page = kBuild + "/man/gpumap.1";
  for (const char* device : {"utf8", "ascii"}) {
    ProcResult r = sh(std::string("groff -man -ww -z -T") + device + " " + quote(page));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << device;
  }
  ProcResult r = sh("MANPAGER=cat MANWIDTH=120 man -l " + quote(page) + " | sed 's/.\x08//g'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* heading : {"NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "gpumap pick [--gpus N]"})
    EXPECT_NE(r.out.find(heading), std::string::npos) << heading << "\n" << r.out.substr(0, 2000);
  EXPECT_EQ(r.out.find("\\"), std::string::npos) << "a stray roff escape rendered literally";
}

// bash: source the generated script and call _gpumap with COMP_WORDS set, as bash does on Tab.
std::set<std::string> bash_complete(const std::vector<std::string>& words) {
  std::string arr;
  for (const std::string& w : words) arr += " " + quote(w);
  // In an empty folder, so file-name completion adds nothing.
  ProcResult r = sh("d=$(mktemp -d); cd \"$d\"; source " + quote(kBuild + "/completion/bash/gpumap") + "; COMP_WORDS=(" +
                    quote(GPUMAP_BINARY) + arr + "); COMP_CWORD=" + std::to_string(words.size()) +
                    "; _gpumap; printf '%s\\n' \"${COMPREPLY[@]}\"; cd /; rmdir \"$d\"");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return lines(r.out);
}

std::set<std::string> bundled_hosts() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(std::string(GPUMAP_SOURCE_DIR) + "/hosts"))
    if (e.path().extension() == ".json") out.insert(e.path().stem());
  return out;
}

TEST(BashCompletion, CompletesCommandsOptionsAndHosts) {
  const json d = describe();
  std::set<std::string> first = bash_complete({""});
  for (const json& c : d["commands"]) EXPECT_EQ(first.count(c["name"]), 1u) << c["name"];
  EXPECT_EQ(first.count("help"), 1u);
  EXPECT_EQ(first.count("__probe"), 0u);
  EXPECT_EQ(bash_complete({"pi"}), std::set<std::string>{"pick"});
  EXPECT_EQ(bash_complete({"--vers"}), std::set<std::string>{"--version"});

  for (const json& c : d["commands"]) {
    std::set<std::string> got = bash_complete({c["name"], "--"});
    for (const std::string& o : option_words(d, c))
      if (o.rfind("--", 0) == 0) {
        EXPECT_EQ(got.count(o), 1u) << c["name"] << " " << o;
      }
    for (const std::string& o : got) EXPECT_EQ(o.rfind("--", 0), 0u) << o;
  }
  std::set<std::string> hosts = bundled_hosts();
  ASSERT_FALSE(hosts.empty());
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"--simulate", ""}, {"pick", "--simulate", ""}, {"list", "--simulate", "=", ""}}) {
    std::set<std::string> got = bash_complete(words);
    for (const std::string& h : hosts) EXPECT_EQ(got.count(h), 1u) << h << " after " << words[words.size() - 2];
  }
  EXPECT_EQ(bash_complete({"pick", "--format", ""}), (std::set<std::string>{"env", "uuid", "index"}));
  EXPECT_EQ(bash_complete({"pick", "--gpus", ""}), std::set<std::string>{});
  EXPECT_EQ(bash_complete({"help", "ver"}), std::set<std::string>{"verify"});
  EXPECT_EQ(bash_complete({"run", "--gpus", "2", "--", "ech"}).count("echo"), 1u);
  EXPECT_EQ(bash_complete({"snapshot", ""}), (std::set<std::string>{"save", "diff"}));
  EXPECT_EQ(bash_complete({"snapshot", "d"}), std::set<std::string>{"diff"});
  EXPECT_EQ(bash_complete({"snapshot", "save", "--j"}), std::set<std::string>{"--json"});
}

// Options every command takes may come before the command (main.cc's command_first): Tab after
// them still offers the commands, and what follows the command completes as after `gpumap CMD`.
TEST(BashCompletion, CommandsAfterLeadingGlobalOptions) {
  const json d = describe();
  for (const std::vector<std::string>& before : std::vector<std::vector<std::string>>{
           {"--simulate", "dgx8"}, {"--json"}, {"--wide", "--json"}, {"--simulate", "=", "dgx8"}, {"--simulate=dgx8"},
           {"--json", "--simulate", "dgx8", "--wide"}}) {
    std::vector<std::string> words = before;
    words.push_back("");
    std::set<std::string> got = bash_complete(words);
    for (const json& c : d["commands"]) EXPECT_EQ(got.count(c["name"]), 1u) << c["name"] << " after " << words[0];
    EXPECT_EQ(got.count("help"), 1u);
    words.back() = "pi";
    EXPECT_EQ(bash_complete(words), std::set<std::string>{"pick"}) << words[0];
    words.back() = "snapshot";
    words.push_back("");
    EXPECT_EQ(bash_complete(words), (std::set<std::string>{"save", "diff"})) << words[0];
  }
  EXPECT_EQ(bash_complete({"--simulate", "dgx8", "pick", "--format", ""}), (std::set<std::string>{"env", "uuid", "index"}));
  EXPECT_EQ(bash_complete({"--json", "help", "ver"}), std::set<std::string>{"verify"});
  EXPECT_EQ(bash_complete({"--json", "--wi"}), std::set<std::string>{"--wide"});  // a dash: options, not commands
  std::set<std::string> hosts = bash_complete({"--json", "--simulate", ""});
  for (const std::string& h : bundled_hosts()) EXPECT_EQ(hosts.count(h), 1u) << h;
}

// The variables gpumap reasons about (model/env_vars.h), for --env NAME=VALUE and --unset NAME.
std::set<std::string> known_variables(const json& d, const std::string& prefix, const std::string& suffix) {
  std::set<std::string> out;
  for (const json& v : d["environment"]) {
    std::string name = v["name"];
    if (name.rfind(prefix, 0) == 0 && std::find(v["read_by"].begin(), v["read_by"].end(), "environment") != v["read_by"].end())
      out.insert(name + suffix);
  }
  return out;
}

TEST(BashCompletion, EnvOffersTheVariablesGpumapKnows) {
  const json d = describe();
  std::set<std::string> cuda = known_variables(d, "CUDA_", "=");
  ASSERT_GE(cuda.size(), 3u);  // CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, CUDA_MPS_PIPE_DIRECTORY
  EXPECT_EQ(cuda.count("CUDA_VISIBLE_DEVICES="), 1u);
  // sh() starts bash with PATH, HOME and LC_ALL only: nothing named CUDA_ or SLURM_ is exported.
  EXPECT_EQ(bash_complete({"map", "--env", "CUDA_"}), cuda);
  EXPECT_EQ(bash_complete({"doctor", "--env", "SLURM_"}), known_variables(d, "SLURM_", "="));
  EXPECT_EQ(bash_complete({"map", "--unset", "CUDA_"}), known_variables(d, "CUDA_", ""));
  EXPECT_EQ(bash_complete({"map", "--env", "GPUMAP_"}), known_variables(d, "GPUMAP_", "="));  // GPUMAP_BOUND only
  EXPECT_EQ(bash_complete({"map", "--env", "LC_A"}), std::set<std::string>{"LC_ALL="}) << "exported variables too";
}

// Round trip: everything completion offers, gpumap accepts.
TEST(BashCompletion, EveryOfferedOptionAndHostIsAccepted) {
  const json d = describe();
  for (const json& c : d["commands"]) {
    std::string name = c["name"];
    std::map<std::string, bool> takes_value;
    for (const json* list : {&c["options"], &d["common_options"]})
      for (const json& o : *list) {
        takes_value[o["name"]] = o["takes_value"];
        for (const json& a : o.value("aliases", json::array())) takes_value[a] = o["takes_value"];  // ps --query-compute-apps
      }
    for (const std::string& o : bash_complete({name, "--"})) {
      std::vector<std::string> args = {name, o};
      if (takes_value[o]) args.push_back("1");
      if (o != "--help") args.push_back("--help");
      CliRun r = gpumap_here(args);  // in process: a few hundred runs
      EXPECT_EQ(r.code, 0) << "gpumap " << name << " " << o << ": " << r.err;
    }
  }
  for (const std::string& h : bash_complete({"list", "--simulate", ""})) {
    CliRun r = gpumap_here({"list", "--simulate", h});
    EXPECT_EQ(r.code, 0) << h << ": " << r.err;
  }
}

// The words a GPU argument may be on a host: its nvidia-smi indices, GPU UUIDs and MIG UUIDs.
std::set<std::string> host_gpu_words(const std::string& host) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/hosts/" + host + ".json");
  json h = json::parse(in);
  std::set<std::string> out;
  for (size_t i = 0; i < h["gpus"].size(); ++i) {
    const json& g = h["gpus"][i];
    out.insert(std::to_string(i));
    out.insert(g["uuid"].get<std::string>());
    if (g.contains("mig_devices"))
      for (const json& m : g["mig_devices"]) out.insert(m["uuid"].get<std::string>());
  }
  return out;
}

// GPU arguments complete to the host's GPUs (the --simulate host of the line), comma lists item by
// item, and --query-gpu / --query to their fields; everything offered is accepted back.
TEST(BashCompletion, GpuArgumentsAndQueryFields) {
  std::set<std::string> mig = host_gpu_words("mig");
  ASSERT_EQ(mig.size(), 6u);  // 0, 1, two GPU UUIDs, two MIG UUIDs
  EXPECT_EQ(bash_complete({"which", "--simulate", "mig", ""}), mig);
  for (const std::string& w : mig) {
    CliRun r = gpumap_here({"which", "--simulate", "mig", w});
    EXPECT_EQ(r.code, 0) << "which " << w << ": " << r.err;
  }
  EXPECT_EQ(bash_complete({"which", "--simulate", "=", "mig", "MIG-d"}),
            std::set<std::string>{"MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd"});
  std::set<std::string> dgx = host_gpu_words("dgx8");
  std::set<std::string> after_zero;
  for (const std::string& w : dgx) after_zero.insert("0," + w);
  EXPECT_EQ(bash_complete({"verify", "--simulate", "dgx8", "--expect", "0,"}), after_zero);
  EXPECT_EQ(bash_complete({"--simulate=dgx8", "pick", "--include", "GPU-1688"}),
            std::set<std::string>{"GPU-1688fc99-465a-7a8f-b276-a5609c38d727"});
  EXPECT_EQ(bash_complete({"list", "--query-gpu", "=", "index,memory.u"}), std::set<std::string>{"index,memory.used"});
  EXPECT_EQ(bash_complete({"ps", "--query", "pid,gpu_u"}), std::set<std::string>{"pid,gpu_uuid"});
  for (const auto& [cmd, option] : {std::pair<std::string, std::string>{"list", "--query-gpu"}, {"ps", "--query"}}) {
    std::set<std::string> fields = bash_complete({cmd, option, ""});
    EXPECT_GE(fields.size(), 10u) << option;
    std::string all;
    for (const std::string& f : fields) all += (all.empty() ? "" : ",") + f;
    CliRun r = gpumap_here({cmd, "--simulate", "h200x2", option + "=" + all});
    EXPECT_EQ(r.code, 0) << option << "=" << all << ": " << r.err;
  }
}

TEST(ZshCompletion, ParsesAndListsEveryCommandAndOption) {
  std::string file = kBuild + "/completion/zsh/_gpumap";
  ProcResult syntax = sh("command -v zsh >/dev/null || { echo 'zsh is not installed (scripts/deps.sh installs it)'; exit 1; }; "
                         "zsh -n " + quote(file));
  ASSERT_EQ(syntax.exit_code, 0) << syntax.out << syntax.err;
  const json d = describe();
  std::string z = read_file(file);
  for (const json& c : d["commands"]) {
    std::string name = c["name"];
    EXPECT_NE(z.find("    '" + name + ":"), std::string::npos) << name << " missing from the command list";
    std::string arm = section(z, "\n    " + name + ")\n", "      ;;");
    ASSERT_FALSE(arm.empty()) << name;
    for (const std::string& o : option_words(d, c)) {
      bool spec = arm.find(o + "[") != std::string::npos || arm.find(o + "=[") != std::string::npos;
      EXPECT_TRUE(spec) << name << " " << o;
    }
  }
}

// zsh for real: an interactive zsh on a pseudo-terminal, compinit with the generated function,
// then Tab, and the listing it prints.
std::string zsh_tab(const std::string& line) {
  std::string dir = temp_dir("zsh");
  fs::copy_file(kBuild + "/completion/zsh/_gpumap", dir + "/_gpumap");
  fs::create_directories(dir + "/bin");
  fs::create_symlink(GPUMAP_BINARY, dir + "/bin/gpumap");
  std::string script =
      "zmodload zsh/zpty\n"
      "zpty z 'PS1=\"> \" PATH=" + dir + "/bin:$PATH zsh -f -i'\n"
      "zpty -w z 'cd " + dir + "; fpath=(" + dir + " $fpath); autoload -Uz compinit; compinit -u -d " + dir + "/zcompdump'\n"
      "zpty -w z 'zstyle \":completion:*\" list-grouped false; LISTMAX=10000; print RE\"\"ADY'\n"
      "zpty -r z out '*READY*'\n"
      "zpty -w -n z " + quote(line) + "$'\\t'\n"
      "sleep 2\n"
      "out=; while zpty -r -t z chunk; do out+=$chunk; done\n"
      "print -r -- $out\n"
      "zpty -d z\n";
  ProcResult r = run_capture({"/usr/bin/zsh", "-f", "-c", script}, {"PATH=/usr/bin:/bin", "HOME=" + dir, "TERM=dumb"}, 60000);
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(ZshCompletion, TabCompletesCommandsOptionsAndHosts) {
  ASSERT_EQ(access("/usr/bin/zsh", X_OK), 0) << "zsh is not installed (scripts/deps.sh installs it)";
  const json d = describe();
  std::string cmds = zsh_tab("gpumap ");
  for (const json& c : d["commands"]) EXPECT_NE(cmds.find(c["name"].get<std::string>()), std::string::npos) << c["name"] << "\n" << cmds;
  std::string pick = zsh_tab("gpumap pick --");
  for (const json& c : d["commands"])
    if (c["name"] == "pick")
      for (const std::string& o : option_words(d, c))
        if (o.rfind("--", 0) == 0) {
          EXPECT_NE(pick.find(o), std::string::npos) << o << "\n" << pick;
        }
  std::string hosts = zsh_tab("gpumap list --simulate ");
  for (const std::string& h : bundled_hosts()) EXPECT_NE(hosts.find(h), std::string::npos) << h << "\n" << hosts;
  std::string sub = zsh_tab("gpumap snapshot ");
  EXPECT_NE(sub.find("save"), std::string::npos) << sub;
  EXPECT_NE(sub.find("diff"), std::string::npos) << sub;
  std::string env = zsh_tab("gpumap map --env CUDA_");
  for (const std::string& v : known_variables(d, "CUDA_", "")) EXPECT_NE(env.find(v), std::string::npos) << v << "\n" << env;
  // After the options every command takes, the commands again, and a command's own words.
  for (const char* line : {"gpumap --simulate dgx8 ", "gpumap --json "}) {
    std::string after = zsh_tab(line);
    for (const json& c : d["commands"]) EXPECT_NE(after.find(c["name"].get<std::string>()), std::string::npos) << line << c["name"] << "\n" << after;
  }
  // GPU arguments and comma lists of GPUs and fields.
  std::string gpus = zsh_tab("gpumap which --simulate mig ");
  for (const std::string& w : host_gpu_words("mig")) EXPECT_NE(gpus.find(w), std::string::npos) << w << "\n" << gpus;
  std::string list = zsh_tab("gpumap verify --simulate dgx8 --expect 0,GPU-16");
  EXPECT_NE(list.find("1688fc99-465a-7a8f-b276-a5609c38d727,"), std::string::npos) << list;  // the line, redrawn
  std::string fields = zsh_tab("gpumap list --query-gpu=index,memory.u");
  EXPECT_NE(fields.find("memory.used"), std::string::npos) << fields;
  std::string sub2 = zsh_tab("gpumap --json snapshot ");
  EXPECT_NE(sub2.find("save"), std::string::npos) << sub2;
  EXPECT_NE(sub2.find("diff"), std::string::npos) << sub2;
}

// fish: source the generated script in a fish with gpumap on PATH and ask `complete -C LINE`.
std::set<std::string> fish_complete(const std::string& line) {
  std::string dir = temp_dir("fish");
  fs::create_directories(dir + "/bin");
  fs::create_symlink(GPUMAP_BINARY, dir + "/bin/gpumap");
  std::string script = "source " + quote(kBuild + "/completion/fish/gpumap.fish") + "; cd " + quote(dir) +
                       "; complete -C " + quote(line);
  ProcResult r = run_capture({"/usr/bin/fish", "--no-config", "-c", script},
                             {"PATH=" + dir + "/bin:/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C"}, 60000);
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << line;
  std::set<std::string> out;
  for (const std::string& l : lines(r.out)) out.insert(l.substr(0, l.find('\t')));  // "WORD\tdescription"
  return out;
}

TEST(FishCompletion, CompletesCommandsOptionsHostsSubcommandsAndVariables) {
  ASSERT_EQ(access("/usr/bin/fish", X_OK), 0) << "fish is not installed (scripts/deps.sh installs it)";
  const json d = describe();
  std::set<std::string> first = fish_complete("gpumap ");
  for (const json& c : d["commands"]) EXPECT_EQ(first.count(c["name"]), 1u) << c["name"];
  EXPECT_EQ(first.count("help"), 1u);
  EXPECT_EQ(first.count("__probe"), 0u);
  for (const json& c : d["commands"]) {
    std::set<std::string> got = fish_complete("gpumap " + c["name"].get<std::string>() + " --");
    for (const std::string& o : option_words(d, c))
      if (o.rfind("--", 0) == 0) {
        EXPECT_EQ(got.count(o), 1u) << c["name"] << " " << o;
      }
  }
  std::set<std::string> hosts = fish_complete("gpumap list --simulate ");
  for (const std::string& h : bundled_hosts()) EXPECT_EQ(hosts.count(h), 1u) << h;
  EXPECT_EQ(fish_complete("gpumap pick --format "), (std::set<std::string>{"env", "uuid", "index"}));
  EXPECT_EQ(fish_complete("gpumap snapshot "), (std::set<std::string>{"save", "diff"}));
  EXPECT_EQ(fish_complete("gpumap help ver"), std::set<std::string>{"verify"});
  EXPECT_EQ(fish_complete("gpumap map --env CUDA_"), known_variables(d, "CUDA_", "="));
  EXPECT_EQ(fish_complete("gpumap --vers"), std::set<std::string>{"--version"});
  EXPECT_EQ(fish_complete("gpumap run --gpus 2 -- ech").count("echo"), 1u);
  // After the options every command takes, the commands again, and a command's own words.
  for (const std::string before : {"--simulate dgx8 ", "--json ", "--simulate=dgx8 --wide "}) {
    std::set<std::string> got = fish_complete("gpumap " + before);
    for (const json& c : d["commands"]) EXPECT_EQ(got.count(c["name"]), 1u) << before << c["name"];
    EXPECT_EQ(fish_complete("gpumap " + before + "snapshot "), (std::set<std::string>{"save", "diff"})) << before;
    EXPECT_EQ(fish_complete("gpumap " + before + "pick --format "), (std::set<std::string>{"env", "uuid", "index"})) << before;
  }
  EXPECT_EQ(fish_complete("gpumap --json help ver"), std::set<std::string>{"verify"});
  // GPU arguments and comma lists of GPUs and fields.
  EXPECT_EQ(fish_complete("gpumap which --simulate mig "), host_gpu_words("mig"));
  EXPECT_EQ(fish_complete("gpumap verify --simulate dgx8 --expect 0,GPU-16"),
            std::set<std::string>{"0,GPU-1688fc99-465a-7a8f-b276-a5609c38d727"});
  EXPECT_EQ(fish_complete("gpumap --simulate=dgx8 pick --include GPU-16"),
            std::set<std::string>{"GPU-1688fc99-465a-7a8f-b276-a5609c38d727"});
  EXPECT_EQ(fish_complete("gpumap list --query-gpu=index,memory.u"), std::set<std::string>{"--query-gpu=index,memory.used"});
}

// Synopsis lines fit 80 columns: the man page rendered at 80, and each command's --help usage.
TEST(Manual, SynopsisLinesFitEightyColumns) {
  ProcResult r = sh("MANPAGER=cat MANWIDTH=80 man -l " + quote(kBuild + "/man/gpumap.1") + " | sed 's/.\x08//g'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) EXPECT_LE(display_width(l), 80u) << l;
  const json d = describe();
  for (const json& c : d["commands"]) {
    CliRun help = gpumap_here({c["name"], "--help"});
    std::string usage = help.out.substr(0, help.out.find("\n\n"));
    std::istringstream u(usage);
    for (std::string l; std::getline(u, l);) EXPECT_LE(display_width(l), 80u) << c["name"] << ": " << l;
  }
}

// --- cmake --install ---

struct Installed {
  std::string root;  // what to delete afterwards
  std::string prefix;
};

// `cmake --install` writes build/install_manifest.txt; keep the user's own across the test.
class ManifestGuard {
 public:
  ManifestGuard() : path_(kBuild + "/install_manifest.txt"), had_(fs::exists(path_)) {
    if (had_) saved_ = read_file(path_);
  }
  ~ManifestGuard() {
    if (had_) std::ofstream(path_) << saved_;
    else fs::remove(path_);
  }

 private:
  std::string path_;
  bool had_;
  std::string saved_;
};

std::vector<std::string> files_under(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (!e.is_directory()) out.push_back(e.path().string().substr(root.size()));
  std::sort(out.begin(), out.end());
  return out;
}

// One test, not two: both write build/install_manifest.txt, which uninstall reads.
// Issue 56 item 7: the tmpfiles.d entry the packages install, run by the real systemd-tmpfiles
// into a scratch root where a user created the lease folder first: root takes it, mode 1777.
TEST(Install, TheLeaseFolderEntryMakesItRootOwnedAndSticky) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (systemd-tmpfiles changes the owner)";
  ASSERT_EQ(sh("command -v systemd-tmpfiles").exit_code, 0) << "systemd-tmpfiles is not installed (apt-get install systemd)";
  std::string root = temp_dir("tmpfiles");
  ASSERT_TRUE(fs::create_directories(root + "/tmp/gpumap-leases"));
  ASSERT_EQ(chmod((root + "/tmp").c_str(), 01777), 0);
  ASSERT_EQ(chown((root + "/tmp/gpumap-leases").c_str(), 65534, 65534), 0);
  ProcResult r = sh("systemd-tmpfiles --root=" + quote(root) + " --create " +
                    quote(std::string(GPUMAP_SOURCE_DIR) + "/contrib/systemd/gpumap-leases.tmpfiles"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  struct stat st {};
  ASSERT_EQ(stat((root + "/tmp/gpumap-leases").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  fs::remove_all(root);
}

TEST(Install, PrefixAndDestdirInstallsWorkRelocatedAndUninstallRemovesThem) {
  ManifestGuard guard;
  std::string t = temp_dir("install");
  std::vector<std::string> cache = {"GPUMAP_CACHE_DIR=" + t + "/cache"};
  ProcResult in = sh("cmake --install " + quote(kBuild) + " --prefix " + quote(t + "/prefix"));
  ASSERT_EQ(in.exit_code, 0) << in.out << in.err;
  std::string p = t + "/prefix";
  for (std::string f : {"/bin/gpumap", "/" GPUMAP_INSTALL_SIM_DIR "/libnvidia-ml.so.1", "/" GPUMAP_INSTALL_SIM_DIR "/libcuda.so.1",
                        "/" GPUMAP_INSTALL_HOSTS_DIR "/seed-mixed.json", "/" GPUMAP_INSTALL_MANDIR "/man1/gpumap.1",
                        "/" GPUMAP_BASH_COMPLETION_DIR "/gpumap", "/" GPUMAP_INSTALL_DATADIR "/zsh/site-functions/_gpumap",
                        "/" GPUMAP_INSTALL_DATADIR "/fish/vendor_completions.d/gpumap.fish",
                        "/" GPUMAP_INSTALL_DOCDIR "/README.md", "/" GPUMAP_INSTALL_DOCDIR "/docs/cli.md"})
    EXPECT_TRUE(fs::exists(p + f)) << f;

  // Moved elsewhere, it still finds its hosts and simulated driver (not the build tree's).
  fs::rename(p, t + "/moved");
  std::string moved = t + "/moved";
  ProcResult hosts = sh(quote(moved + "/bin/gpumap") + " __describe --format hosts");
  EXPECT_EQ(lines(hosts.out), bundled_hosts());
  ProcResult sim = sh(quote(moved + "/bin/gpumap") + " --simulate seed-mixed --json", cache);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_EQ(json::parse(sim.out)["cuda"]["devices"].size(), 4u);
  ProcResult probe = sh(quote(moved + "/bin/gpumap") + " map --simulate seed-mixed --probe --json", cache);
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_EQ(sh(quote(moved + "/bin/gpumap") + " --version").out, gpumap({"--version"}).out);
  fs::rename(moved, p);

  ProcResult un = sh("cmake --build " + quote(kBuild) + " --target uninstall");
  ASSERT_EQ(un.exit_code, 0) << un.out << un.err;
  EXPECT_EQ(files_under(p), std::vector<std::string>{});
  for (std::string d : {"/" GPUMAP_INSTALL_HOSTS_DIR, "/" GPUMAP_INSTALL_SIM_DIR, "/" GPUMAP_INSTALL_DOCDIR})
    EXPECT_FALSE(fs::exists(p + d)) << d << " left behind";
  fs::remove_all(t);

  // DESTDIR with the /usr prefix (how packages are built): zsh's file goes where Debian's zsh looks.
  t = temp_dir("destdir");
  in = sh("DESTDIR=" + quote(t) + " cmake --install " + quote(kBuild) + " --prefix /usr");
  ASSERT_EQ(in.exit_code, 0) << in.out << in.err;
  EXPECT_TRUE(fs::exists(t + "/usr/" GPUMAP_INSTALL_DATADIR "/zsh/vendor-completions/_gpumap"));
  // Issue 53: and where RHEL's zsh looks (the .rpm is this tree); issue 56: the lease folder's
  // tmpfiles.d entry, root-owned and sticky as docs/launch.md advises.
  EXPECT_TRUE(fs::exists(t + "/usr/" GPUMAP_INSTALL_DATADIR "/zsh/site-functions/_gpumap"));
  std::ifstream tmpfiles(t + "/usr/lib/tmpfiles.d/gpumap.conf");
  std::string conf((std::istreambuf_iterator<char>(tmpfiles)), std::istreambuf_iterator<char>());
  EXPECT_NE(conf.find("\nd /tmp/gpumap-leases 1777 root root -\n"), std::string::npos) << conf;
  EXPECT_TRUE(fs::exists(t + "/usr/" GPUMAP_INSTALL_MANDIR "/man1/gpumap.1"));
  sim = sh(quote(t + "/usr/bin/gpumap") + " list --simulate h200x2");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.out.find(t + "/usr/" GPUMAP_INSTALL_HOSTS_DIR "/h200x2.json"), std::string::npos) << sim.out;
  un = sh("DESTDIR=" + quote(t) + " cmake --build " + quote(kBuild) + " --target uninstall");
  ASSERT_EQ(un.exit_code, 0) << un.out << un.err;
  EXPECT_EQ(files_under(t), std::vector<std::string>{});
  fs::remove_all(t);
}

}  // namespace
}  // namespace gpumap::testing
