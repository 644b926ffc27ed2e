// Every command's --json output against the contract table in docs/cli.md: each key the table
// lists is there with its type, and no document has a key the table does not list.
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::ordered_json;

struct Key {
  std::string name, type;
  bool optional = false;
};
using Contract = std::map<std::string, std::vector<Key>>;

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

/// The rows between the contract markers of docs/cli.md: | object | `key` | type | meaning |.
Contract read_contract() {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/cli.md");
  Contract c;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("<!-- contract:begin -->") != std::string::npos) inside = true;
    else if (line.find("<!-- contract:end -->") != std::string::npos) inside = false;
    else if (inside && line.rfind("| ", 0) == 0 && line.find("`") != std::string::npos) {
      // Split on cells; "\|" inside a type is a union bar, not a cell border.
      std::vector<std::string> cells;
      std::string cur;
      for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') cur += line[++i];
        else if (line[i] == '|') cells.push_back(trim(cur)), cur.clear();
        else cur += line[i];
      }
      if (cells.size() < 3) continue;
      Key k;
      k.name = cells[1].substr(1, cells[1].size() - 2);  // `key`
      k.type = cells[2];
      if (!k.type.empty() && k.type.back() == '?') k.optional = true, k.type.pop_back();
      c[cells[0]].push_back(k);
    }
  }
  return c;
}

class Checker {
 public:
  explicit Checker(Contract c) : c_(std::move(c)) {}

  /// Errors, one per line; empty when `v` matches `type`.
  std::string check(const json& v, const std::string& type, const std::string& path) {
    std::string errors;
    size_t start = 0;
    for (;;) {  // a union: any alternative may match
      size_t bar = type.find('|', start);
      std::string alt = type.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      std::string e = check_one(v, alt, path);
      if (e.empty()) return "";
      errors += e;
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    return errors;
  }

  const std::set<std::string>& checked() const { return checked_; }
  const Contract& contract() const { return c_; }

 private:
  std::string check_one(const json& v, const std::string& t, const std::string& path) {
    auto bad = [&](const std::string& what) { return path + ": want " + what + ", got " + v.dump() + "\n"; };
    if (t.size() > 2 && t.substr(t.size() - 2) == "[]") {
      if (!v.is_array()) return bad(t);
      std::string e;
      for (size_t i = 0; i < v.size(); ++i) e += check(v[i], t.substr(0, t.size() - 2), path + "[" + std::to_string(i) + "]");
      return e;
    }
    if (t == "null") return v.is_null() ? "" : bad(t);
    if (t == "bool") return v.is_boolean() ? "" : bad(t);
    if (t == "int") return v.is_number_integer() ? "" : bad(t);
    if (t == "number") return v.is_number() ? "" : bad(t);
    if (t == "string") return v.is_string() ? "" : bad(t);
    if (t == "object") return v.is_object() ? "" : bad(t);
    if (!c_.count(t)) return path + ": type `" + t + "` is not in the contract table\n";
    if (!v.is_object()) return bad(t);
    checked_.insert(t);
    std::vector<Key> keys = expand(t);
    std::string e;
    std::set<std::string> known;
    for (const Key& k : keys) {
      known.insert(k.name);
      if (!v.contains(k.name)) {
        if (!k.optional) e += path + "." + k.name + ": missing (" + t + ")\n";
      } else {
        e += check(v[k.name], k.type, path + "." + k.name);
      }
    }
    for (const auto& [name, _] : v.items())
      if (!known.count(name)) e += path + "." + name + ": not in the contract for `" + t + "`\n";
    return e;
  }

  std::vector<Key> expand(const std::string& t) {
    std::vector<Key> out;
    for (const Key& k : c_.at(t)) {
      if (k.name == "*") {
        checked_.insert(k.type);
        for (const Key& inner : expand(k.type)) out.push_back(inner);
      } else {
        out.push_back(k);
      }
    }
    return out;
  }

  Contract c_;
  std::set<std::string> checked_;
};

/// h200x2 with this test process on GPU 0; `shared`: its parent too (two live processes on one GPU
/// give ps a finding of the GPU: a ps_finding).
std::string h200x2_with_process(bool shared = false) {
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["gpus"][0]["processes"] = json::array({{{"pid", getpid()}, {"used_memory_mib", 256}}});
  if (shared) h["gpus"][0]["processes"].push_back({{"pid", getppid()}, {"used_memory_mib", 128}});
  return write_temp_file(shared ? "contract-host-shared.json" : "contract-host.json", h.dump());
}

TEST(CliJsonContract, EveryCommandMatchesDocsCliMd) {
  Checker checker(read_contract());
  ASSERT_GE(checker.contract().size(), 20u) << "the contract table in docs/cli.md was not found";
  std::string locks = temp_dir("contract-locks");
  std::string ps_host = h200x2_with_process();
  std::string batch = write_temp_file("contract-batch.jsonl", "{\"CUDA_VISIBLE_DEVICES\": \"1,0\"}\n");
  struct Case {
    std::string type;
    std::vector<std::string> args;
    std::vector<std::string> env = {};
    bool on_stderr = false;
  };
  std::vector<Case> cases = {
      {"list", {"list", "--simulate", "mig"}},
      {"list", {"list", "--simulate", "dgx8"}},
      {"map", {"map", "--simulate", "mig"}},
      {"map", {"map", "--simulate", "seed-mixed", "--check", "--env", "CUDA_VISIBLE_DEVICES=1,0"}},
      {"map", {"map", "--simulate", "h200x2", "--env", "CUDA_DEVICE_ORDER=bogus"}},
      {"explain", {"explain", "--simulate", "seed-mixed", "--env", "CUDA_VISIBLE_DEVICES=1,GPU-zz,0"}},
      {"which", {"which", "--simulate", "mig", "0", "1"}},
      {"which", {"which", "--simulate", "seed-mixed", "2", "0"}},
      {"verify", {"verify", "--simulate", "h200x2", "--expect", "1"}},
      {"verify", {"verify", "--simulate", "mig", "--expect", "MIG-d280783e"}},
      {"doctor", {"doctor", "--simulate", "seed-mixed", "--env", "CUDA_VISIBLE_DEVICES=1"}},
      {"map", {"map", "--simulate", "dgx8", "cuda:1"}},
      {"map_batch", {"map", "--simulate", "seed-mixed", "--batch", batch}},
      {"which", {"which", "--simulate", "dgx8", "cuda:1", "0"}},
      {"pick", {"pick", "--simulate", "h200x2", "--exclude", "1"}},
      {"run", {"run", "--simulate", "h200x2", "--json", "--", "true"}, {}, true},
      {"bind", {"bind", "--simulate", "h200x2", "--", "true"}, {"LOCAL_RANK=1"}, true},
      {"ps", {"ps", "--simulate", ps_host}},
      {"ps", {"ps", "--simulate", h200x2_with_process(true)}},
  };
  for (Case& c : cases) {
    if (std::find(c.args.begin(), c.args.end(), "--json") == c.args.end()) c.args.insert(c.args.begin() + 1, "--json");
    c.env.push_back("GPUMAP_LOCK_DIR=" + locks);
    c.env.push_back("GPUMAP_IN_CONTAINER=0");
    CliRun r = gpumap(c.args, c.env);
    std::string label;
    for (const std::string& a : c.args) label += a + " ";
    const std::string& text = c.on_stderr ? r.err : r.out;
    json j = json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << label << "is not one JSON document:\n" << text << r.err;
    EXPECT_EQ(checker.check(j, c.type, c.type), "") << label;
  }
  // Every object of the table was met: no row documents a key nothing prints.
  for (const auto& [name, _] : checker.contract())
    EXPECT_TRUE(checker.checked().count(name)) << "no command's output exercised `" << name << "`";
}

TEST(CliJsonContract, CheckerRejectsMissingExtraAndMistypedKeys) {
  Checker c(read_contract());
  json finding = {{"id", "x"}, {"severity", "warning"}, {"message", "m"}, {"fix", ""}};
  EXPECT_EQ(c.check(finding, "finding", "f"), "");
  json missing = finding;
  missing.erase("fix");
  EXPECT_NE(c.check(missing, "finding", "f").find("f.fix: missing"), std::string::npos);
  json extra = finding;
  extra["ordinal"] = 1;
  EXPECT_NE(c.check(extra, "finding", "f").find("not in the contract"), std::string::npos);
  json mistyped = finding;
  mistyped["id"] = 3;
  EXPECT_NE(c.check(mistyped, "finding", "f"), "");
}

TEST(CliJsonContract, RunAndBindWriteTheDocumentToJsonFile) {
  std::string dir = temp_dir("contract-file");
  std::string locks = temp_dir("contract-locks");
  CliRun r = gpumap({"run", "--simulate", "h200x2", "--json-file", dir + "/run.json", "--", "sh", "-c", "cat " + dir + "/run.json"},
                    {"GPUMAP_LOCK_DIR=" + locks});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);  // the command could read it: written before it started
  EXPECT_EQ(j["exports"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
  EXPECT_EQ(j["devices"][0]["cuda_ordinal"], 0);
  EXPECT_EQ(j["lease"]["dir"], locks);
  EXPECT_NE(r.err.find("gpumap run: leased 1 GPU"), std::string::npos) << r.err;  // text still on stderr
  CliRun b = gpumap({"bind", "--simulate", "h200x2", "--json-file", dir + "/bind.json", "--", "cat", dir + "/bind.json"},
                    {"LOCAL_RANK=1"});
  ASSERT_EQ(b.code, 0) << b.err;
  json k = json::parse(b.out);
  EXPECT_EQ(k["local_rank"]["value"], 1);
  EXPECT_EQ(k["devices"][0]["nvml_index"], 1);
  EXPECT_EQ(k["lease"], nullptr);
  CliRun bad = gpumap({"run", "--simulate", "h200x2", "--json-file", dir + "/no/such/dir/x.json", "--", "true"},
                      {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("cannot write --json-file " + dir + "/no/such/dir/x.json"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gpumap::testing
