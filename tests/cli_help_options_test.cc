// Help lists only the options a command takes (issue 43 item 4: `help --json`, the man page and
// `--help` listed --json for top, metrics and serve, which refuse it).  Every listing comes from
// the command table's one list (cli/command.h: command_options), and this walks what they show.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

json reference() {
  CliRun r = gpumap_here({"help", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

// Each command's listed options (its own and the common ones its entry names), all given at once
// with --help: the parser takes every one of them.  Every common option it does not list is
// refused on its own, before anything runs, with the command's hint.
TEST(CliHelpOptions, EveryListedOptionIsTakenAndEveryOtherRefused) {
  const json d = reference();
  std::set<std::string> common;
  for (const json& o : d["common_options"]) common.insert(o["name"]);
  std::map<std::string, bool> takes_value;
  for (const json& o : d["common_options"]) takes_value[o["name"]] = o["takes_value"];
  size_t refused = 0;
  for (const json& c : d["commands"]) {
    const std::string name = c["name"];
    ASSERT_TRUE(c.contains("common_options")) << name << ": its entry does not say which common options it takes";
    std::vector<std::string> args = {name};
    for (const json& o : c["options"]) {
      args.push_back(o["name"]);
      if (o["takes_value"]) args.push_back("1");
    }
    std::set<std::string> listed;
    for (const json& o : c["common_options"]) {
      std::string n = o;
      EXPECT_EQ(common.count(n), 1u) << name << " lists " << n << ", not a common option";
      listed.insert(n);
      if (n == "--help") continue;
      args.push_back(n);
      if (takes_value[n]) args.push_back("1");
    }
    args.push_back("--help");
    CliRun r = gpumap_here(args);
    EXPECT_EQ(r.code, 0) << "gpumap " << name << " with every option it lists: " << r.err;
    for (const std::string& n : common) {
      if (listed.count(n)) continue;
      ++refused;
      std::vector<std::string> one = {name, n};
      if (takes_value[n]) one.push_back("1");
      CliRun no = gpumap_here(one);
      EXPECT_EQ(no.code, 2) << "gpumap " << name << " " << n << " is not listed but not refused: " << no.err;
      EXPECT_NE(no.err.find("gpumap " + name + " takes no " + n), std::string::npos) << no.err;
      EXPECT_NE(no.err.find("hint: drop " + n), std::string::npos) << no.err;
    }
  }
  EXPECT_EQ(refused, 4u);  // --json: top, metrics, serve; --simulate: fleet
}

// What the issue saw: top, metrics and serve listed --json in help --json, the man page and --help.
TEST(CliHelpOptions, TopMetricsAndServeListNoJson) {
  const json d = reference();
  for (const json& c : d["commands"]) {
    const std::string name = c["name"];
    bool lists = std::find(c["common_options"].begin(), c["common_options"].end(), "--json") != c["common_options"].end();
    EXPECT_EQ(lists, name != "top" && name != "metrics" && name != "serve") << name;
  }
  CliRun man = gpumap_here({"__describe", "--format", "man"});
  ASSERT_EQ(man.code, 0) << man.err;
  std::string top = man.out.substr(man.out.find("\n.SS top\n"));
  top = top.substr(0, top.find("\n.SS ", 1));
  EXPECT_NE(top.find("Takes no \\-\\-json."), std::string::npos) << top;
  std::string common = man.out.substr(man.out.find("\n.SH COMMON OPTIONS\n"));
  EXPECT_NE(common.find("(not top, metrics, serve)"), std::string::npos) << common.substr(0, 800);
  CliRun help = gpumap_here({"top", "--help", "--json"});  // top's help as JSON still
  EXPECT_EQ(help.code, 0) << help.err;
  EXPECT_EQ(json::parse(help.out)["name"], "top");
}

}  // namespace
}  // namespace gpumap::testing
