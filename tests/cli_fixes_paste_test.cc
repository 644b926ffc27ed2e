// Issue 22 points 1 and 2: every `fix` gpumap doctor prints is one line a shell accepts, and pasting
// it leaves doctor with nothing above info for that finding; the fixes of one run never name
// different GPUs for the same list.  Walks every bundled host (hosts/*.json) under every seed
// scenario (/work/shared/seeds: the two field guides' environments) and every trap of
// docs/findings.md.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;
using Vars = std::map<std::string, std::string>;

// The variables doctor is run with; only these are set or unset on its command line.
const char* kNames[] = {"CUDA_VISIBLE_DEVICES",   "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "SLURM_STEP_GPUS",
                        "SLURM_JOB_GPUS",         "SLURM_LOCALID",     "SLURM_GPUS_ON_NODE",     "LOCAL_RANK",
                        "LOCAL_WORLD_SIZE",       "GPUMAP_BOUND",      "CUDA_MPS_PIPE_DIRECTORY", "RAY_ADDRESS",
                        "SLURM_JOB_ID",           "CUDA_VISIBLE",      "CUDA_VISIABLE_DEVICES"};

std::vector<std::string> host_names() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUMAP_SOURCE_DIR) + "/hosts"))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct HostFacts {
  std::vector<std::string> uuids, pci;
};

HostFacts facts(const std::string& host) {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/hosts/" + host + ".json");
  json j = json::parse(in);
  HostFacts f;
  for (const json& g : j["gpus"]) {
    f.uuids.push_back(g["uuid"]);
    f.pci.push_back(g["pci_bus_id"]);
  }
  return f;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The seeds' scenarios and the traps of docs/findings.md, on this host's own UUIDs.
std::vector<Vars> environments(const HostFacts& h) {
  const std::string u0 = h.uuids[0], u1 = h.uuids.size() > 1 ? h.uuids[1] : h.uuids[0];
  std::vector<Vars> out = {
      // Seeds: CUDA_VISIBLE_DEVICES taken from nvidia-smi, PCI_BUS_ID, containers, torchrun, Slurm.
      {},
      {{"CUDA_VISIBLE_DEVICES", "0"}},
      {{"CUDA_VISIBLE_DEVICES", "1"}},
      {{"CUDA_VISIBLE_DEVICES", "2"}},
      {{"CUDA_VISIBLE_DEVICES", "4"}},
      {{"CUDA_VISIBLE_DEVICES", "2,3"}},
      {{"CUDA_VISIBLE_DEVICES", "2,0"}},
      {{"CUDA_VISIBLE_DEVICES", "4,5"}},
      {{"CUDA_VISIBLE_DEVICES", "0,2,4"}},
      {{"CUDA_VISIBLE_DEVICES", "3,4,5,6"}},
      {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}},
      {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "2"}},
      {{"NVIDIA_VISIBLE_DEVICES", "2"}},
      {{"NVIDIA_VISIBLE_DEVICES", "2,3"}, {"CUDA_VISIBLE_DEVICES", "3"}},
      {{"LOCAL_RANK", "1"}, {"CUDA_VISIBLE_DEVICES", "0"}},
      {{"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "4"}, {"CUDA_VISIBLE_DEVICES", "2,3"}},
      {{"SLURM_STEP_GPUS", "2,3"}, {"SLURM_JOB_GPUS", "2,3"}, {"SLURM_LOCALID", "0"}},
      {{"SLURM_STEP_GPUS", "1,2"}, {"SLURM_LOCALID", "0"}},
      // docs/findings.md, row by row.
      {{"CUDA_DEVICE_ORDER", "pci_bus_id"}},
      {{"CUDA_DEVICE_ORDER", ""}},
      {{"CUDA_DEVICE_ORDER", std::string(1100, 'P')}},
      {{"CUDA_VISIBLE_DEVICES", u1.substr(4)}},
      {{"CUDA_VISIBLE_DEVICES", "0," + u1.substr(4)}},
      {{"CUDA_VISIBLE_DEVICES", h.pci.back()}},
      {{"CUDA_VISIBLE_DEVICES", "00000000:00:07.0"}},
      {{"CUDA_VISIBLE_DEVICES", "MIG-" + u0 + "/1/0"}},
      {{"CUDA_VISIBLE_DEVICES", "0x1"}},
      {{"CUDA_VISIBLE_DEVICES", "1.5,0"}},
      {{"CUDA_VISIBLE_DEVICES", "0;1"}},
      {{"CUDA_VISIBLE_DEVICES", "1 0"}},
      {{"CUDA_VISIBLE_DEVICES", "all"}},
      {{"CUDA_VISIBLE_DEVICES", "none"}},
      {{"CUDA_VISIBLE_DEVICES", ""}},
      {{"CUDA_VISIBLE_DEVICES", "-1"}},
      {{"CUDA_VISIBLE_DEVICES", u0 + ", " + u1}},
      {{"CUDA_VISIBLE_DEVICES", " " + u0}},
      {{"CUDA_VISIBLE_DEVICES", u0 + ",1"}},
      {{"CUDA_VISIBLE_DEVICES", "0," + u1}},
      {{"CUDA_VISIBLE_DEVICES", "1,1"}},
      {{"CUDA_VISIBLE_DEVICES", "0,0"}},
      {{"CUDA_VISIBLE_DEVICES", "1,9,2"}},
      {{"CUDA_VISIBLE_DEVICES", "9"}},
      {{"CUDA_VISIBLE_DEVICES", "abc"}},
      {{"CUDA_VISIBLE_DEVICES", "GPU-0000"}},
      {{"CUDA_VISIBLE_DEVICES", "gpu-" + u0.substr(4)}},
      {{"CUDA_VISIBLE_DEVICES", "MIG-" + u0.substr(4)}},
      {{"CUDA_VISIBLE_DEVICES", u0 + "ff"}},
      {{"CUDA_VISIBLE_DEVICES", "4294967297"}},
      {{"CUDA_VISIBLE_DEVICES", "-0"}},
      {{"CUDA_VISIBLE_DEVICES", "+1,0"}},
      {{"CUDA_VISIBLE_DEVICES", std::string(2700, '0')}},
      {{"CUDA_VISIBLE_DEVICES", "MIG-" + std::string(1100, 'x')}},  // cuInit crashes (DRIVER_CRASH)
      {{"CUDA_MPS_PIPE_DIRECTORY", "/tmp/mps"}, {"CUDA_VISIBLE_DEVICES", "0"}},
      {{"LOCAL_RANK", "x"}},
      {{"LOCAL_RANK", "5"}},
      {{"LOCAL_WORLD_SIZE", "16"}, {"CUDA_VISIBLE_DEVICES", "0,1"}},
      {{"GPUMAP_BOUND", "0"}, {"CUDA_VISIBLE_DEVICES", "0"}, {"LOCAL_RANK", "1"}},
      {{"SLURM_STEP_GPUS", "2,3"}, {"SLURM_JOB_GPUS", "2,3"}, {"SLURM_LOCALID", "0"}, {"CUDA_VISIBLE_DEVICES", "5,6"}},
      {{"SLURM_STEP_GPUS", "1,2"}, {"SLURM_LOCALID", "0"}, {"CUDA_VISIBLE_DEVICES", "1,2"}},
      {{"SLURM_JOB_GPUS", "40,41"}},
      // The framework layer (docs/framework-rules.md): uuid-prefix-breaks-nvml-lookup, torch-count-differs,
      // ray-gave-no-gpus.
      {{"CUDA_VISIBLE_DEVICES", u1.substr(0, 12)}},
      {{"CUDA_VISIBLE_DEVICES", "GPU-" + upper(u0.substr(4))}},
      {{"CUDA_VISIBLE_DEVICES", "0,-"}},
      {{"CUDA_VISIBLE_DEVICES", "\u0661"}},
      {{"CUDA_VISIBLE_DEVICES", "0,9,0"}},
      {{"CUDA_VISIBLE_DEVICES", ""}, {"RAY_ADDRESS", "127.0.0.1:6379"}},
      // Issue 52 items 4 and 6: another layer's keyword; a misspelled name, renamed by its fix.
      {{"SLURM_JOB_ID", "7"}, {"CUDA_VISIBLE_DEVICES", "NoDevFiles"}},
      {{"CUDA_VISIBLE_DEVICES", "RR"}},
      {{"CUDA_VISIBLE", "1"}},
      {{"CUDA_VISIABLE_DEVICES", "1,0"}},
      {{"CUDA_VISIABLE_DEVICES", "1,0"}, {"CUDA_DEVICE_ORDER", "pci_bus_id"}},
      // Two and three causes at once (issue 43 item 2: doctor's combined fix).
      {{"CUDA_DEVICE_ORDER", "pci_bus_id"}, {"SLURM_STEP_GPUS", "1,2"}},
      {{"CUDA_VISIBLE_DEVICES", "1,9,2"}, {"SLURM_STEP_GPUS", "1,2"}},
      {{"CUDA_VISIBLE_DEVICES", "0,0"}, {"SLURM_STEP_GPUS", "1"}, {"CUDA_MPS_PIPE_DIRECTORY", "/tmp/mps"}},
  };
  return out;
}

std::string describe(const std::string& host, const Vars& vars) {
  std::string s = host + ":";
  for (const auto& [k, v] : vars) s += " " + k + "=" + (v.size() > 80 ? v.substr(0, 40) + "…" : v);
  return s;
}

std::vector<std::string> options(const Vars& vars) {
  std::vector<std::string> out;
  for (const char* name : kNames) {
    auto it = vars.find(name);
    if (it == vars.end()) out.insert(out.end(), {"--unset", name});
    else out.insert(out.end(), {"--env", std::string(name) + "=" + it->second});
  }
  return out;
}

// `cmd --json` under `vars`; with `refused_ok`, an environment gpumap refuses (exit 2: NVIDIA_VISIBLE_DEVICES
// naming a GPU a two-GPU host lacks) is discarded instead of failing the test.
json run_json(const std::string& host, const std::string& cmd, const Vars& vars, std::map<std::string, json>& cache,
              bool refused_ok = false) {
  std::string key = cmd + "\n" + describe(host, vars);
  for (const auto& [k, v] : vars) key += "\n" + k + "=" + v;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::vector<std::string> args = {cmd, "--json", "--simulate", host};
  for (const std::string& o : options(vars)) args.push_back(o);
  CliRun r = gpumap_here(args);  // in process: a few hundred runs (a process each cost ~1.7 s under ASan)
  json j = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(!j.is_discarded() || (refused_ok && r.code == 2)) << describe(host, vars) << " " << cmd << ": " << r.out << r.err;
  return cache[key] = j;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Applies a pasted line to the variables: `export A=1 B=2`, `unset A B`, `A=1 B=2 command ...`,
// statements joined by `;` or `&&`, a `#` comment at the end.  False (and why) for anything else.
bool apply(const std::string& line, Vars& vars, std::string& why) {
  std::string code = line.substr(0, line.find(" #"));
  if (code.rfind("#", 0) == 0) code.clear();
  std::vector<std::string> statements;
  std::string cur;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == ';' || code.compare(i, 2, "&&") == 0) {
      statements.push_back(cur);
      cur.clear();
      if (code[i] == '&') ++i;
    } else {
      cur += code[i];
    }
  }
  statements.push_back(cur);
  bool any = false;
  for (const std::string& st : statements) {
    std::vector<std::string> w = words(st);
    if (w.empty()) continue;
    any = true;
    if (w[0] == "unset") {
      for (size_t k = 1; k < w.size(); ++k) vars.erase(w[k]);
    } else {
      size_t k = w[0] == "export" ? 1 : 0;
      bool assigned = false;
      for (; k < w.size() && w[k].find('=') != std::string::npos; ++k) {
        vars[w[k].substr(0, w[k].find('='))] = w[k].substr(w[k].find('=') + 1);
        assigned = true;
      }
      if (!assigned) {
        why = "`" + st + "` is neither an assignment nor unset";
        return false;
      }
    }
  }
  if (!any) why = "nothing to apply";
  return any;
}

// The GPUs a fix leaves visible, as map shows them (cuda:0, cuda:1, ...).
std::vector<std::string> visible_after(const std::string& host, const Vars& vars, std::map<std::string, json>& cache) {
  json m = run_json(host, "map", vars, cache);
  std::vector<std::string> out;
  if (m.contains("cuda") && m["cuda"].contains("devices"))
    for (const json& d : m["cuda"]["devices"]) out.push_back(d["uuid"]);
  return out;
}

// One host's walk, or its part `part` of `parts` (every parts-th environment from the part-th):
// a whole host took up to 250 s under ASan on a loaded machine and one passed ctest's 300 s
// limit (issue 45 item 7), so the large hosts are walked in three tests that ctest can run side by
// side, each well inside the limit.  Every environment is still walked; the three multi-cause
// environments at the end of the list fall one into each part.
void walk(const std::string& host, size_t part = 0, size_t parts = 1) {
  std::map<std::string, json> cache;
  HostFacts h = facts(host);
  size_t fixes = 0, combined = 0;
  std::vector<Vars> all = environments(h);
  for (size_t i = part; i < all.size(); i += parts) {
    const Vars& vars = all[i];
    std::string what = describe(host, vars);
    json d = run_json(host, "doctor", vars, cache, true);
    if (d.is_discarded()) continue;
    // Fix -> the GPUs it gives (only fixes that change which GPUs CUDA sees).
    std::vector<std::pair<std::string, std::vector<std::string>>> gives;
    std::vector<std::string> now = visible_after(host, vars, cache);
    for (const json& f : d["findings"]) {
      std::string id = f["id"], fix = f["fix"];
      if (fix.empty()) continue;
      ++fixes;
      std::string err;
      EXPECT_EQ(fix.find('\n'), std::string::npos) << what << " " << id << ": the fix is more than one line: " << fix;
      EXPECT_TRUE(bash_accepts(fix, err)) << what << " " << id << ": bash -n refuses `" << fix << "`: " << err;
      Vars pasted = vars;
      std::string why;
      if (!apply(fix, pasted, why)) {
        ADD_FAILURE() << what << " " << id << ": `" << fix << "` cannot be pasted: " << why;
        continue;
      }
      json after = run_json(host, "doctor", pasted, cache);
      // The findings folded into this one (its `also`) are the same cause: its fix clears them too.
      std::set<std::string> cleared = {id};
      if (f.contains("also"))
        for (const json& a : f["also"]) cleared.insert(a["id"].get<std::string>());
      for (const json& g : after["findings"])
        EXPECT_FALSE(cleared.count(g["id"].get<std::string>()) && g["severity"] != "info")
            << what << " " << id << ": after pasting `" << fix << "` doctor still says " << g.dump();
      std::vector<std::string> given = visible_after(host, pasted, cache);
      if (given != now && !given.empty()) gives.push_back({fix, given});
    }
    // Issue 43 item 2: the one line for all the fixes leaves no warning or error that a line fixes,
    // and none that was not there before.
    if (d["combined_fix"].is_string()) {
      ++combined;
      std::string line = d["combined_fix"], why;
      std::set<std::string> before;
      for (const json& f : d["findings"])
        if (f["severity"] != "info") before.insert(f["id"].get<std::string>());
      std::string err;
      EXPECT_TRUE(bash_accepts(line, err)) << what << ": bash -n refuses the combined `" << line << "`: " << err;
      Vars pasted = vars;
      if (!apply(line, pasted, why)) {
        ADD_FAILURE() << what << ": the combined `" << line << "` cannot be pasted: " << why;
      } else {
        json after = run_json(host, "doctor", pasted, cache);  // kept: the loop reads into it
        for (const json& g : after["findings"])
          EXPECT_FALSE(g["severity"] != "info" && (!g["fix"].get<std::string>().empty() || !before.count(g["id"].get<std::string>())))
              << what << ": after the combined `" << line << "` doctor still says " << g.dump();
      }
    }
    // Point 2: two fixes of one run never name different GPUs for the same CUDA_VISIBLE_DEVICES
    // entries: where both give a cuda:N, it is the same GPU (a fix may drop entries that name none).
    if (!vars.count("CUDA_VISIBLE_DEVICES")) continue;
    for (size_t a = 0; a < gives.size(); ++a)
      for (size_t b = a + 1; b < gives.size(); ++b) {
        const auto& x = gives[a].second;
        const auto& y = gives[b].second;
        for (size_t k = 0; k < std::min(x.size(), y.size()); ++k)
          EXPECT_EQ(x[k], y[k]) << what << ": `" << gives[a].first << "` and `" << gives[b].first
                                << "` give different GPUs as cuda:" << k;
      }
  }
  EXPECT_GT(fixes, 20u / parts) << host << ": the walk pasted too few fixes to mean anything";
  EXPECT_GT(combined, 0u) << host << " part " << part << ": no environment of the walk had a combined fix";
}

TEST(CliFixesPaste, EveryBundledHostIsWalked) {
  std::vector<std::string> hosts = host_names();
  EXPECT_GE(hosts.size(), 4u);
  for (const char* h : {"dgx8", "h200x2", "mig", "seed-mixed"})
    EXPECT_NE(std::find(hosts.begin(), hosts.end(), h), hosts.end()) << h;
}

TEST(CliFixesPaste, Dgx8) { walk("dgx8"); }
TEST(CliFixesPaste, H200x2) { walk("h200x2"); }
TEST(CliFixesPaste, MigPart1) { walk("mig", 0, 3); }
TEST(CliFixesPaste, MigPart2) { walk("mig", 1, 3); }
TEST(CliFixesPaste, MigPart3) { walk("mig", 2, 3); }
TEST(CliFixesPaste, SeedMixedPart1) { walk("seed-mixed", 0, 3); }
TEST(CliFixesPaste, SeedMixedPart2) { walk("seed-mixed", 1, 3); }
TEST(CliFixesPaste, SeedMixedPart3) { walk("seed-mixed", 2, 3); }

// A host added to hosts/ is walked too (the four above are the bundled ones today).
TEST(CliFixesPaste, OtherBundledHosts) {
  for (const std::string& h : host_names())
    if (h != "dgx8" && h != "h200x2" && h != "mig" && h != "seed-mixed") walk(h);
}

}  // namespace
}  // namespace gpumap::testing
