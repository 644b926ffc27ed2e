// The layer rule of docs/coding-guidelines.md, checked over the source tree: each folder of src/
// includes only the folders below it, and inside src/session/ each operation includes only those
// below it.  A test file may include more (a fixture from another layer); the sources may not.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

// What each folder of src/ may include besides itself: docs/coding-guidelines.md, "Layers".
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"model", {}},
      {"formats", {"model"}},
      {"env", {"model"}},
      {"resolve", {"model", "env"}},
      {"findings", {"model", "env", "resolve"}},
      // Each operation's answer (plain structs): what session/ computes and output/ renders.
      {"answer", {"model", "formats", "env", "resolve", "findings"}},
      {"os", {"model"}},
      {"driver", {"model", "env", "os"}},
      {"output", {"model", "formats", "env", "resolve", "findings", "answer"}},
      // An operation fills its answer (answer/) and renders nothing: never output/ (issue 57).
      {"session", {"model", "formats", "env", "resolve", "findings", "answer", "os", "driver", "prom"}},
      // Prometheus's HTTP query API (`gpumap fleet`): the client, the answer's parser, the join.
      {"prom", {"model", "formats", "answer", "os", "http"}},
      // The HTTP layer: messages, chunking, limits and TLS set-up, `serve`'s server and the client.
      {"http", {"model", "os"}},
      {"fake", {"model", "formats", "driver"}},  // the simulated driver: never the resolver
      // gpumap-kubelet, the pod-resources reader program (gRPC): it prints formats/pod_resources.h.
      {"kube", {"model", "formats"}},
      // The HTTP front end (`gpumap serve`'s exporter): a session's metrics over http/'s server.
      {"serve", {"model", "formats", "answer", "output", "session", "os", "driver", "http"}},
      // The terminal front end (`gpumap top`): ncurses, its keys and its loop.
      {"top", {"model", "formats", "answer", "output", "session", "os"}},
      {"cli", {"model", "formats", "answer", "output", "session", "serve", "top"}},
      {"capi", {"model", "formats", "answer", "output", "session", "gpumap"}},  // gpumap/: the public C header
  };
  return table;
}

// Single files allowed one more folder: the probe programs are the child that runs cuInit, the
// one place that calls driver/ directly.
const std::map<std::string, std::string>& exceptions() {
  static const std::map<std::string, std::string> table = {
      {"cli/cmd_probe.cc", "driver"},
      {"capi/probe_main.cc", "driver"},
  };
  return table;
}

// Inside src/session/: each file's level (by its name without .cc/.h); a file includes only
// session files of a lower level (and its own header).  Two operations that include each other
// cannot be tested, built or reasoned about one at a time: `ps` and `pods` did, through the
// kubelet (issue 45).  A new session file fails the test until it has a row.
struct SessionLevel {
  int level;
  const char* why;
};
const std::map<std::string, SessionLevel>& session_levels() {
  static const char* kBase = "the Session itself, and what takes only Seams or plain values: no operation";
  static const char* kOne = "one query on a Session, or a cache of one of level 0";
  static const char* kTwo = "an operation composed of level-1 queries (ps: the kubelet's cache; map: explain, which)";
  static const char* kThree = "an operation on ps's frame or verify's answer";
  static const char* kFour = "the environment diagnosis: devices, explain, which and ps together";
  static const char* kFive = "the library's operations in one place (self.h): every use case a front end calls";
  static const std::map<std::string, SessionLevel> table = {
      // A second header of session.cc (kept out of session.h, which nearly every file includes):
      // what the Session reads of a simulated host's container and kubelet, and the process's
      // frameworks.  It includes no operation, so everything from the Session up may include it.
      {"container_facts", {-1, "declarations session.cc implements for the levels above: no operation"}},
      {"session", {0, kBase}},       {"output_file", {0, kBase}}, {"launch_plan", {0, kBase}},
      {"kubelet", {0, kBase}},       {"fleet", {0, kBase}},       {"job_map", {1, kOne}},
      {"kubelet_cache", {1, kOne}},  {"lease_gpus", {1, kOne}},   {"which", {1, kOne}},
      {"explain", {1, kOne}},        {"map_batch", {1, kOne}},    {"mapping_snapshot", {1, kOne}},
      {"ps", {2, kTwo}},             {"verify", {2, kTwo}},       {"list", {2, kTwo}},
      {"map", {2, kTwo}},            {"launch", {2, kTwo}},
      {"pods", {3, kThree}},         {"job", {3, kThree}},        {"top", {3, kThree}},
      {"metrics", {3, kThree}},      {"devices", {3, kThree}},
      {"health", {3, kThree}},
      {"diagnose", {4, kFour}},
      {"self", {5, kFive}},
  };
  return table;
}

// session/'s tests test answers: a test file of src/session/ includes no output/ header either
// (the rendering of an answer is tested in output/ or tests/).  The files listed still do, each
// with why; the list only shrinks.
const std::map<std::string, std::string>& session_tests_rendering() {
  static const std::map<std::string, std::string> table = {
  };
  return table;
}

bool is_test_file(const fs::path& p) {
  std::string name = p.filename().string();
  return name.ends_with("_test.cc") || name.ends_with("_testing.h");
}

// Each line of `file` that `include` matches: its number and the regex's first group.
std::vector<std::pair<size_t, std::string>> includes_of(const fs::path& file, const std::regex& include) {
  std::vector<std::pair<size_t, std::string>> out;
  std::ifstream in(file);
  std::string line;
  std::smatch m;
  for (size_t n = 1; std::getline(in, line); ++n)
    if (std::regex_search(line, m, include)) out.emplace_back(n, m[1]);
  return out;
}

TEST(Layers, EachFolderIncludesOnlyTheFoldersBelowIt) {
  const fs::path src = fs::path(GPUMAP_SOURCE_DIR) / "src";
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  size_t files = 0, includes = 0;
  for (const fs::directory_entry& dir : fs::directory_iterator(src)) {
    if (!dir.is_directory()) continue;
    std::string folder = dir.path().filename().string();
    auto rule = allowed().find(folder);
    ASSERT_NE(rule, allowed().end()) << "src/" << folder << " has no place in the layer table: add it here and to "
                                     << "docs/coding-guidelines.md";
    for (const fs::directory_entry& f : fs::recursive_directory_iterator(dir.path())) {
      if (!f.is_regular_file() || is_test_file(f.path())) continue;
      std::string ext = f.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      ++files;
      std::string rel = fs::relative(f.path(), src).string();
      for (const auto& [n, to] : includes_of(f.path(), include)) {
        ++includes;
        if (to == folder || rule->second.count(to)) continue;
        if (auto e = exceptions().find(rel); e != exceptions().end() && e->second == to) continue;
        ADD_FAILURE() << "src/" << rel << ":" << n << " includes " << to << "/, which " << folder
                      << "/ may not (a layer includes only those below it: docs/coding-guidelines.md)";
      }
    }
  }
  EXPECT_GT(files, 100u);  // the tree was found
  EXPECT_GT(includes, 300u);
}

TEST(Layers, EachSessionFileIncludesOnlyTheSessionFilesBelowIt) {
  const fs::path dir = fs::path(GPUMAP_SOURCE_DIR) / "src" / "session";
  const std::regex include(R"(^\s*#\s*include\s+"session/([a-z_]+)\.h")");
  size_t files = 0, includes = 0;
  for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
    std::string ext = f.path().extension().string();
    if (!f.is_regular_file() || is_test_file(f.path()) || (ext != ".cc" && ext != ".h")) continue;
    ++files;
    std::string from = f.path().stem().string();
    auto level = session_levels().find(from);
    if (level == session_levels().end()) {
      ADD_FAILURE() << "src/session/" << f.path().filename().string()
                    << " has no level in session_levels() (tests/layers_test.cc): give it one, with its reason";
      continue;
    }
    for (const auto& [n, to] : includes_of(f.path(), include)) {
      ++includes;
      if (to == from) continue;
      auto below = session_levels().find(to);
      if (below == session_levels().end()) {
        ADD_FAILURE() << "src/session/" << f.path().filename().string() << ":" << n << " includes session/" << to
                      << ".h, which has no level in session_levels()";
      } else if (below->second.level >= level->second.level) {
        ADD_FAILURE() << "src/session/" << f.path().filename().string() << ":" << n << " includes session/" << to
                      << ".h (level " << below->second.level << ": " << below->second.why << ") from level "
                      << level->second.level << " (" << level->second.why
                      << "): a session file includes only those below it";
      }
    }
  }
  EXPECT_GT(files, 40u);  // the folder was found
  EXPECT_GT(includes, 40u);
}

// docs/design.md draws the layers as they are: its table ("The layers as built") has one row per
// folder of allowed(), with the same folders in its "includes" column.
TEST(Layers, TheDesignDocumentsTableIsThisTable) {
  std::ifstream in(fs::path(GPUMAP_SOURCE_DIR) / "docs" / "design.md");
  ASSERT_TRUE(in) << "docs/design.md";
  const std::regex row(R"(^\s*\| `([a-z_]+)` \|\s*([a-z_, ]*?)\s*\|)");
  std::map<std::string, std::set<std::string>> drawn;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, row)) continue;
    std::set<std::string>& to = drawn[m[1]];
    std::string list = m[2];
    static const std::regex word("[a-z_]+");
    for (std::sregex_iterator w(list.begin(), list.end(), word), end; w != end; ++w) to.insert(w->str());
  }
  for (const auto& [folder, below] : allowed()) {
    auto d = drawn.find(folder);
    if (d == drawn.end()) {
      ADD_FAILURE() << "docs/design.md, \"The layers as built\": no row for " << folder << "/: add one";
    } else if (d->second != below) {
      std::string want;
      for (const std::string& b : below) want += (want.empty() ? "" : ", ") + b;
      ADD_FAILURE() << "docs/design.md, \"The layers as built\": " << folder << "/ includes `" << want
                    << "` (tests/layers_test.cc allowed()): write that in its row";
    }
  }
  for (const auto& [folder, to] : drawn)
    EXPECT_TRUE(allowed().count(folder)) << "docs/design.md draws " << folder << "/, which allowed() does not know";
}

TEST(Layers, SessionTestsTestAnswersNotTheirRendering) {
  const fs::path dir = fs::path(GPUMAP_SOURCE_DIR) / "src" / "session";
  const std::regex include(R"re(^\s*#\s*include\s+"(output/[a-z_]+\.h)")re");
  size_t files = 0;
  for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
    if (!f.is_regular_file() || !is_test_file(f.path())) continue;
    ++files;
    std::string name = f.path().filename().string();
    if (session_tests_rendering().count(name)) continue;
    for (const auto& [n, to] : includes_of(f.path(), include))
      ADD_FAILURE()
          << "src/session/" << name << ":" << n << " includes " << to
          << ": a session test asserts on the answer; test its rendering in output/ (the view's test) or tests/";
  }
  for (const auto& [name, why] : session_tests_rendering())
    EXPECT_TRUE(fs::exists(dir / name)) << "session_tests_rendering() lists src/session/" << name << ", which is gone: "
                                        << "take it off the list";
  EXPECT_GT(files, 20u);  // the folder was found
}

}  // namespace
