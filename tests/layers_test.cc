// The layer rule of docs/coding-guidelines.md, checked over the source tree: each folder of src/
// includes only the folders below it.  A test file may include more (a fixture from another
// layer); the sources may not.
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
      {"session", {"model", "formats", "env", "resolve", "findings", "answer", "os", "driver", "output"}},
      {"fake", {"model", "formats", "driver"}},  // the simulated driver: never the resolver
      // gpumap-kubelet, the pod-resources reader program (gRPC): it prints formats/pod_resources.h.
      {"kube", {"model", "formats"}},
      // The HTTP front end (`gpumap serve`'s exporter): a session's metrics over os/'s HTTP server.
      {"serve", {"model", "formats", "answer", "output", "session", "os", "driver"}},
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

bool is_test_file(const fs::path& p) {
  std::string name = p.filename().string();
  return name.ends_with("_test.cc") || name.ends_with("_testing.h");
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
      std::ifstream in(f.path());
      std::string line;
      for (size_t n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        ++includes;
        std::string to = m[1];
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

}  // namespace
