// Black-box tests of contracts the CLI had broken (issue 20 point 10): JSON where --json is
// asked, options that are not values, exit codes as documented, and lease state in list --json.
#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// An unsafe lock file (here a symbolic link) is not "no lease": the table says "unsafe lock
// file", run refuses the GPU, and list --json says why (it said `lease: null`).
TEST(CliContracts, AnUnsafeLockFileIsNamedInListJson) {
  std::string locks = temp_dir("contract-unsafe");
  std::string target = locks + "/target";
  std::ofstream(target) << "keep\n";
  ASSERT_EQ(symlink(target.c_str(), (locks + "/GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab.lock").c_str()), 0);
  std::vector<std::string> env = {"GPUMAP_LOCK_DIR=" + locks};
  CliRun j = gpumap_here({"list", "--simulate", "h200x2", "--json"}, env);
  ASSERT_EQ(j.code, 0) << j.err;
  json l = json::parse(j.out);
  const json& lease = l["gpus"][0]["lease"];
  ASSERT_TRUE(lease.is_object()) << l["gpus"][0].dump();
  EXPECT_EQ(lease["held"], false);
  EXPECT_TRUE(has(lease["unsafe"].get<std::string>(), "is a symbolic link")) << lease.dump();
  EXPECT_TRUE(l["gpus"][1]["lease"].is_null()) << "a GPU without a lock file has no lease";
  CliRun t = gpumap_here({"list", "--simulate", "h200x2"}, env);
  EXPECT_TRUE(has(t.out, "unsafe lock file")) << t.out;
  CliRun r = gpumap({"run", "--simulate", "h200x2", "--include", "0", "--", "true"}, env);  // run: a launch
  EXPECT_EQ(r.code, 6) << r.err;
  std::filesystem::remove_all(locks);
}

TEST(CliContracts, MapJsonAndLineTogetherIsAUsageError) {
  CliRun r = gpumap_here({"map", "--simulate", "h200x2", "--json", "--line"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  // Where JSON was asked, the error is JSON too (the C API's shape), never text.
  EXPECT_EQ(nlohmann::json::parse(r.out)["error"]["code"], 2) << r.out;
  EXPECT_TRUE(has(r.err, "--line and --json together")) << r.err;
}

// `map --unset --json` took `--json` as the variable's name.
TEST(CliContracts, AnOptionIsNeverTakenAsTheValueOfAnother) {
  for (std::vector<std::string> args : {std::vector<std::string>{"map", "--simulate", "h200x2", "--unset", "--json"},
                                        std::vector<std::string>{"map", "--env", "--json", "--simulate", "h200x2"},
                                        std::vector<std::string>{"pick", "--simulate", "h200x2", "--include", "--gpus", "1"}}) {
    CliRun r = gpumap_here(args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << args[3] << r.out << r.err;
    EXPECT_TRUE(has(r.err, "needs a value")) << r.err;
    EXPECT_TRUE(has(r.err, "is an option")) << r.err;
  }
  // A value that merely starts with a dash is still a value.
  CliRun ok = gpumap_here({"map", "--simulate", "h200x2", "--env", "CUDA_VISIBLE_DEVICES=-1", "--json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(CliContracts, HelpJsonIsJson) {
  for (std::vector<std::string> args : {std::vector<std::string>{"help", "--json"}, std::vector<std::string>{"--help", "--json"}}) {
    CliRun r = gpumap_here(args);
    ASSERT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    ASSERT_TRUE(j["commands"].is_array()) << r.out;
    EXPECT_GT(j["commands"].size(), 10u);
  }
  for (std::vector<std::string> args : {std::vector<std::string>{"help", "map", "--json"},
                                        std::vector<std::string>{"map", "--help", "--json"}}) {
    CliRun r = gpumap_here(args);
    ASSERT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["name"], "map") << r.out;
  }
}

// Every --help fits an 80-column terminal, and filling the text loses no word of it.
TEST(CliContracts, EveryHelpFitsEightyColumnsAndKeepsEveryWord) {
  CliRun all = gpumap_here({"help", "--json"});
  ASSERT_EQ(all.code, 0) << all.err;
  json table = json::parse(all.out);
  const auto words = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  const auto check_width = [](const std::string& shown, const std::string& text) {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
      size_t columns = 0;  // code points: the text is UTF-8
      for (unsigned char c : l) columns += (c & 0xC0) != 0x80;
      EXPECT_LE(columns, 80u) << shown << ": " << l;
    }
  };
  CliRun main_help = gpumap_here({"--help"});
  ASSERT_EQ(main_help.code, 0);
  check_width("gpumap --help", main_help.out);
  size_t checked = 0;
  for (const json& c : table["commands"]) {
    std::string name = c["name"];
    CliRun r = gpumap_here({name, "--help"});
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    check_width(name + " --help", r.out);
    // The description's words, all of them and in order, between the usage and the options.
    std::vector<std::string> want = words(c["description"]), got = words(r.out);
    auto at = got.begin();
    for (const std::string& w : want) {
      at = std::find(at, got.end(), w);
      ASSERT_NE(at, got.end()) << name << " --help lost `" << w << "`:\n" << r.out;
    }
    ++checked;
  }
  EXPECT_GE(checked, 15u);
}

// docs/cli.md: a cuda:N that does not exist is a usage error (2), also when no GPU is visible.
TEST(CliContracts, MapCudaOrdinalWithNoVisibleGpuExits2) {
  CliRun r = gpumap_here({"map", "cuda:0", "--simulate", "h200x2"}, {"CUDA_VISIBLE_DEVICES=-1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "no cuda:N exists in this environment")) << r.err;
}

}  // namespace
}  // namespace gpumap::testing
