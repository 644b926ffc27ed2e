// Issue 8: advice a user can follow.  Each test pastes exactly what gpumap printed (which, pick,
// run/bind's child environment, a finding's fix) and checks that the asked GPUs come out, in
// order, and that `gpumap doctor` then has nothing to warn about.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

// In process (tests/cli_helpers.h): these tests run gpumap a few hundred times.
CliRun on(const std::string& host, std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.push_back("--simulate");
  args.push_back(host);
  return gpumap_here(args, env);
}


std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, sep);) out.push_back(part);
  return out;
}

// --env/--unset options that make exactly `vars` the CUDA variables (the rest unset).
std::vector<std::string> env_options(const std::map<std::string, std::string>& vars) {
  std::vector<std::string> out;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    auto it = vars.find(name);
    if (it == vars.end()) {
      out.push_back("--unset");
      out.push_back(name);
    }
  }
  for (const auto& [k, v] : vars) {
    out.push_back("--env");
    out.push_back(k + "=" + v);
  }
  return out;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The UUIDs `map` shows as cuda:0, cuda:1, ... under `vars`.
std::vector<std::string> mapped(const std::string& host, const std::map<std::string, std::string>& vars) {
  CliRun r = on(host, with({"map", "--json"}, env_options(vars)));
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> out;
  json j = json::parse(r.out);
  for (auto& d : j["cuda"]["devices"]) out.push_back(d["uuid"]);
  return out;
}

// `doctor` under `vars` has no warning and no error; returns the findings' ids.
std::string doctor_clean(const std::string& host, const std::map<std::string, std::string>& vars,
                         const std::string& what) {
  CliRun r = on(host, with({"doctor", "--json"}, env_options(vars)));
  EXPECT_EQ(r.code, 0) << what << ": " << r.out << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["counts"]["error"], 0) << what << ": " << j["findings"].dump(1);
  EXPECT_EQ(j["counts"]["warning"], 0) << what << ": " << j["findings"].dump(1);
  std::string ids;
  for (auto& f : j["findings"]) ids += f["id"].get<std::string>() + " ";
  return ids;
}

// Reads "A=1 B=2" or "export A=1\nexport B=2" into a map.
std::map<std::string, std::string> assignments(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    if (word == "export") continue;
    size_t eq = word.find('=');
    EXPECT_NE(eq, std::string::npos) << "not an assignment: `" << word << "` in " << text;
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

bool every_entry_is_an_int(const std::string& cvd) {
  for (const std::string& e : split(cvd, ','))
    if (e.empty() || e.find_first_not_of("0123456789") != std::string::npos) return false;
  return true;
}

struct HostSets {
  std::string host;
  std::vector<std::vector<std::string>> sets;  // nvidia-smi indices to ask `which` for
};

const std::vector<HostSets>& host_sets() {
  static const std::vector<HostSets> all = {
      {"seed-mixed", {{"0"}, {"1"}, {"2"}, {"3"}, {"1", "0"}, {"0", "1"}, {"3", "1", "2"}, {"2", "0", "3", "1"}}},
      {"h200x2", {{"0"}, {"1"}, {"1", "0"}, {"0", "1"}}},
      {"dgx8", {{"7"}, {"4", "5"}, {"7", "6", "5", "4", "3", "2", "1", "0"}, {"0", "2", "4", "6"}}},
      {"mig", {{"0"}, {"1"}, {"1", "0"}}},
  };
  return all;
}

TEST(CliAdvice, WhichFormsGiveTheAskedGpusAndACleanDoctor) {
  for (const HostSets& hs : host_sets())
    for (const std::vector<std::string>& set : hs.sets) {
      std::string what = hs.host + " which";
      for (const std::string& i : set) what += " " + i;
      CliRun r = on(hs.host, with({"which", "--json"}, set));
      ASSERT_EQ(r.code, 0) << what << ": " << r.err;
      json j = json::parse(r.out);
      std::vector<std::string> want = split(j["uuid_form"]["CUDA_VISIBLE_DEVICES"], ',');
      // devices: what CUDA shows, in the order asked (a MIG-mode GPU: its MIG devices, together).
      std::vector<int> asked;
      for (const json& d : j["devices"]) {
        int n = d["nvml_index"];
        if (asked.empty() || asked.back() != n || d["mig"].is_null()) asked.push_back(n);
        std::string u = d["uuid"];
        EXPECT_NE(std::find(want.begin(), want.end(), u), want.end()) << what << ": " << u;
      }
      ASSERT_EQ(asked.size(), set.size()) << what;
      for (size_t k = 0; k < set.size(); ++k) EXPECT_EQ(asked[k], std::stoi(set[k])) << what;
      // The UUID form, as printed (CUDA_DEVICE_ORDER left as it was: unset).
      std::map<std::string, std::string> uuid_vars = {
          {"CUDA_VISIBLE_DEVICES", j["uuid_form"]["CUDA_VISIBLE_DEVICES"].get<std::string>()}};
      EXPECT_EQ(mapped(hs.host, uuid_vars), want) << what << " (uuid form)";
      doctor_clean(hs.host, uuid_vars, what + " (uuid form)");
      // The index form, when offered.
      if (!j["index_form"].is_null()) {
        std::map<std::string, std::string> index_vars = j["index_form"].get<std::map<std::string, std::string>>();
        EXPECT_TRUE(every_entry_is_an_int(index_vars["CUDA_VISIBLE_DEVICES"])) << what;
        EXPECT_EQ(mapped(hs.host, index_vars), want) << what << " (index form)";
        doctor_clean(hs.host, index_vars, what + " (index form)");
      } else {
        EXPECT_EQ(hs.host, "mig") << what << ": no index form on a host without MIG";
      }
    }
}

TEST(CliAdvice, WhichTextPrintsTheSameFormsAsItsJson) {
  CliRun r = on("seed-mixed", {"which", "2", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export CUDA_VISIBLE_DEVICES=GPU-35b0fad1-6758-b581-24f3-9f00d2606170,"
                       "GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2\n"),
            std::string::npos)
      << r.out;
}

TEST(CliAdvice, Issue8SeedMixedCudaVisibleDevices1) {
  // The issue's own case: the table says cuda:0 is GPU 0; no finding may say it is GPU 1.
  CliRun r = on("seed-mixed", {"doctor", "--json", "--env", "CUDA_VISIBLE_DEVICES=1"});
  json j = json::parse(r.out);
  for (auto& f : j["findings"]) {
    EXPECT_NE(f["id"], "order-differs") << f.dump();
    EXPECT_EQ(f["message"].get<std::string>().find("cuda:0 is nvidia-smi GPU 1"), std::string::npos) << f.dump();
  }
}

TEST(CliAdvice, EveryQuotedOrdinalAgreesWithTheTable) {
  const std::regex quote("cuda:([0-9]+) (?:is|=) nvidia-smi GPU ([0-9]+)");
  for (const char* host : {"seed-mixed", "dgx8", "h200x2"})
    for (const char* cvd : {"", "1", "3,1", "1,0,2", "0,0", "1,9", "GPU-df9e", "-1"})
      for (const char* order : {"", "PCI_BUS_ID"}) {
        std::map<std::string, std::string> vars;
        if (*cvd) vars["CUDA_VISIBLE_DEVICES"] = cvd;
        if (*order) vars["CUDA_DEVICE_ORDER"] = order;
        std::string what = std::string(host) + " CUDA_VISIBLE_DEVICES=" + cvd + " CUDA_DEVICE_ORDER=" + order;
        CliRun m = on(host, with({"map", "--json"}, env_options(vars)));
        json mj = json::parse(m.out);
        std::vector<int> table;
        for (auto& d : mj["cuda"]["devices"]) table.push_back(d["nvml_index"]);
        for (const char* cmd : {"doctor", "explain", "map"}) {
          CliRun r = on(host, with({cmd, "--json"}, env_options(vars)));
          json j = json::parse(r.out);
          std::vector<std::string> texts;
          for (auto& f : j["findings"]) texts.push_back(f["message"]);
          if (j.contains("explanation"))
            for (auto& l : j["explanation"]) texts.push_back(l);
          for (const std::string& t : texts)
            for (std::sregex_iterator it(t.begin(), t.end(), quote), end; it != end; ++it) {
              size_t n = std::stoul((*it)[1]);
              ASSERT_LT(n, table.size()) << what << " " << cmd << ": " << t;
              EXPECT_EQ(table[n], std::stoi((*it)[2])) << what << " " << cmd << ": " << t;
            }
        }
      }
}

TEST(CliAdvice, PickFormatsLandOnThePickedGpus) {
  std::string locks = temp_dir("locks");
  // seed-mixed: GPU 0 runs a process, so pick takes idle GPUs; under FASTEST_FIRST bare indices
  // would land elsewhere.
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{}, {"--cvd-form", "uuid"}, {"--cvd-form", "index"}}) {
    CliRun j = on("seed-mixed", with({"pick", "--json", "--gpus", "2", "--include", "2,1"}, extra),
                  {"GPUMAP_LOCK_DIR=" + locks});
    ASSERT_EQ(j.code, 0) << j.err;
    std::vector<std::string> want;
    json picked = json::parse(j.out);
    for (auto& g : picked["devices"]) want.push_back(g["uuid"]);
    ASSERT_EQ(want.size(), 2u);
    for (const char* format : {"index", "env"}) {
      CliRun p = on("seed-mixed", with({"pick", "--gpus", "2", "--include", "2,1", "--format", format}, extra),
                    {"GPUMAP_LOCK_DIR=" + locks});
      ASSERT_EQ(p.code, 0) << p.err;
      std::map<std::string, std::string> vars = assignments(p.out);
      EXPECT_EQ(vars["CUDA_DEVICE_ORDER"], "PCI_BUS_ID") << p.out;
      if (std::string(format) == "index" || extra.empty() || extra[1] == "index") {
        EXPECT_TRUE(every_entry_is_an_int(vars["CUDA_VISIBLE_DEVICES"])) << p.out;
      }
      EXPECT_EQ(mapped("seed-mixed", vars), want) << format << ": " << p.out;
      doctor_clean("seed-mixed", vars, std::string("pick --format ") + format);
    }
  }
}

// Runs CMD through gpumap (run or bind) with `env`; returns the child's environment.
std::map<std::string, std::string> child_env(const std::string& host, const std::vector<std::string>& gpumap_args,
                                             const std::vector<std::string>& env, std::string* err = nullptr) {
  CliRun r = gpumap(with(gpumap_args, {"--simulate", host, "--", "env"}), env);
  EXPECT_EQ(r.code, 0) << r.err;
  if (err) *err = r.err;
  std::map<std::string, std::string> out;
  for (const std::string& line : split(r.out, '\n')) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// The variables doctor reads, from a child's environment.
std::map<std::string, std::string> relevant(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : env)
    if (k.rfind("CUDA_", 0) == 0 || k.rfind("SLURM_", 0) == 0 || k.rfind("GPUMAP_BOUND", 0) == 0 ||
        k == "LOCAL_RANK" || k == "RANK" || k == "WORLD_SIZE" || k == "LOCAL_WORLD_SIZE")
      out[k] = v;
  return out;
}

TEST(CliAdvice, RunHandsTheChildIntegersItCanParseAndACleanView) {
  std::string locks = temp_dir("locks");
  for (const char* host : {"seed-mixed", "dgx8", "h200x2"}) {
    std::string err;
    auto env = child_env(host, {"run", "--gpus", "2"}, {"GPUMAP_LOCK_DIR=" + locks}, &err);
    EXPECT_EQ(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
    EXPECT_TRUE(every_entry_is_an_int(env["CUDA_VISIBLE_DEVICES"])) << host << ": " << env["CUDA_VISIBLE_DEVICES"];
    // The GPUs run announced on stderr ("cuda:0 -> GPU N  UUID") are the ones the child's variables give.
    std::vector<std::string> announced;
    std::regex line("cuda:[0-9]+ -> GPU [0-9]+  (GPU-[0-9a-f-]+)");
    for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it) announced.push_back((*it)[1]);
    ASSERT_EQ(announced.size(), 2u) << err;
    EXPECT_EQ(mapped(host, relevant(env)), announced) << host;
    doctor_clean(host, relevant(env), std::string(host) + " run child");
    auto uuid_env = child_env(host, {"run", "--gpus", "1", "--cvd-form", "uuid"}, {"GPUMAP_LOCK_DIR=" + locks});
    EXPECT_EQ(uuid_env["CUDA_VISIBLE_DEVICES"].rfind("GPU-", 0), 0u) << uuid_env["CUDA_VISIBLE_DEVICES"];
  }
}

TEST(CliAdvice, BoundRanksTorchrunAndSrunStyleAreCleanAndToldToUseCuda0) {
  struct Style {
    std::vector<std::string> env;
    std::string rank_var;
  };
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    std::vector<Style> styles = {
        {{"LOCAL_RANK=" + r, "RANK=" + r, "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2"}, "LOCAL_RANK"},
        {{"SLURM_LOCALID=" + r, "SLURM_PROCID=" + r, "SLURM_NTASKS=2", "SLURM_STEP_GPUS=0,1", "SLURM_JOB_ID=7",
          "SLURM_STEP_ID=0", "CUDA_VISIBLE_DEVICES=0,1"},
         "SLURM_LOCALID"},
    };
    for (const Style& st : styles) {
      std::string err;
      auto env = child_env("h200x2", {"bind"}, st.env, &err);
      std::string what = st.rank_var + "=" + r;
      EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], r) << what;  // an int, the rank's own GPU (PCI order)
      EXPECT_EQ(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID") << what;
      EXPECT_EQ(env["GPUMAP_BOUND"], r) << what;
      EXPECT_EQ(env[st.rank_var], r) << what << ": the launcher's variables are kept";
      EXPECT_NE(err.find("use cuda:0"), std::string::npos) << err;
      EXPECT_NE(err.find("int(os.environ[\"" + st.rank_var + "\"]) % torch.cuda.device_count()"), std::string::npos) << err;
      std::vector<std::string> want = {rank == 0 ? "GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab"
                                                 : "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a"};
      EXPECT_EQ(mapped("h200x2", relevant(env)), want) << what;
      std::string ids = doctor_clean("h200x2", relevant(env), "bound " + what);
      EXPECT_NE(ids.find("bound-rank"), std::string::npos) << what << ": " << ids;
    }
  }
  // Without bind, rank 1 with one visible GPU is the error whose fix is bind.
  CliRun unbound = on("h200x2", {"doctor", "--json", "--env", "LOCAL_RANK=1", "--env", "CUDA_VISIBLE_DEVICES=1"});
  EXPECT_EQ(unbound.code, 7) << unbound.out;
}

TEST(CliAdvice, SlurmIdsWithoutCudaVisibleDevicesWarnAndTheFixIsClean) {
  CliRun r = on("seed-mixed", {"doctor", "--json", "--env", "SLURM_STEP_GPUS=2,3", "--unset", "CUDA_VISIBLE_DEVICES"});
  json j = json::parse(r.out);
  std::string fix;
  for (auto& f : j["findings"])
    if (f["id"] == "slurm-gpus-not-applied") {
      EXPECT_EQ(f["severity"], "warning");
      fix = f["fix"];
    }
  ASSERT_FALSE(fix.empty()) << j.dump(1);
  std::map<std::string, std::string> vars = assignments(fix);
  EXPECT_EQ(mapped("seed-mixed", vars),
            (std::vector<std::string>{"GPU-35b0fad1-6758-b581-24f3-9f00d2606170", "GPU-b9e1e9b0-68c9-4af0-129d-20f775a395e4"}));
  vars["SLURM_STEP_GPUS"] = "2,3";
  doctor_clean("seed-mixed", vars, "slurm fix");
  // Human output says it too: not "No traps found".
  CliRun text = on("seed-mixed", {"doctor", "--env", "SLURM_STEP_GPUS=2,3"});
  EXPECT_EQ(text.out.find("No traps found"), std::string::npos) << text.out;
}

TEST(CliAdvice, HidingGpusOnPurposeIsANote) {
  for (const char* v : {"CUDA_VISIBLE_DEVICES=", "CUDA_VISIBLE_DEVICES=-1"}) {
    CliRun r = on("seed-mixed", {"doctor", "--json", "--env", v});
    EXPECT_EQ(r.code, 0) << v << ": " << r.out;
    json j = json::parse(r.out);
    ASSERT_EQ(j["findings"].size(), 1u) << j.dump(1);
    EXPECT_EQ(j["findings"][0]["id"], "gpus-hidden");
    EXPECT_EQ(j["findings"][0]["severity"], "info");
    CliRun x = on("seed-mixed", {"explain", "--env", v});
    EXPECT_EQ(x.out.find("4294967295"), std::string::npos) << x.out;
    // The text's summary counts with the words its tags and the JSON's counts use (issue 43:
    // it said "1 note(s)" under an [info] tag, while "note:" is also a line of each finding).
    CliRun t = on("seed-mixed", {"doctor", "--env", v});
    EXPECT_NE(t.out.find("[info] gpus-hidden"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("\n0 error(s), 0 warning(s), 1 info\n"), std::string::npos) << t.out;
    EXPECT_EQ(t.out.find("note(s)"), std::string::npos) << t.out;
  }
  // The keyword fix gpumap gives for `none` is itself clean.
  CliRun none = on("seed-mixed", {"doctor", "--json", "--env", "CUDA_VISIBLE_DEVICES=none"});
  std::string fix;
  json nj = json::parse(none.out);
  for (auto& f : nj["findings"])
    if (f["id"] == "container-keyword") fix = f["fix"];
  std::istringstream words(fix);
  std::string verb, assignment;
  words >> verb >> assignment;
  ASSERT_EQ(verb, "export") << fix;
  doctor_clean("seed-mixed", assignments(assignment), "container-keyword fix " + assignment);
}

TEST(CliAdvice, ExplainWithADuplicateLabelsNoEntryCuda0) {
  CliRun r = on("seed-mixed", {"explain", "--json", "--env", "CUDA_VISIBLE_DEVICES=2,1,2", "--env",
                               "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 3u);
  for (auto& e : j["entries"]) {
    EXPECT_TRUE(e["cuda_ordinal"].is_null()) << e.dump();
    std::string t = e["text"];
    EXPECT_EQ(t.find("cuda:"), std::string::npos) << t;
    EXPECT_NE(t.find("never used"), std::string::npos) << t;
  }
  // Without the repeat each entry gets its own cuda:N.
  CliRun ok = on("seed-mixed", {"explain", "--json", "--env", "CUDA_VISIBLE_DEVICES=2,1", "--env",
                                "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  json k = json::parse(ok.out);
  EXPECT_NE(k["entries"][1]["text"].get<std::string>().find("cuda:1 = nvidia-smi GPU 1"), std::string::npos) << ok.out;
}

TEST(CliAdvice, AskAboutCudaN) {
  std::vector<std::string> env = {"--env", "CUDA_VISIBLE_DEVICES=7,6,5,4,3,2,1,0", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID"};
  CliRun w = on("dgx8", with({"which", "cuda:4"}, env));
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(w.out.rfind("In this environment cuda:4 is nvidia-smi GPU 3, UUID GPU-", 0), 0u) << w.out;
  CliRun wj = on("dgx8", with({"which", "--json", "cuda:4"}, env));
  json j = json::parse(wj.out);
  EXPECT_EQ(j["asked_cuda"][0]["nvml_index"], 3);
  EXPECT_EQ(j["devices"][0]["nvml_index"], 3);
  // Pasting which's UUID form makes that GPU cuda:0.
  EXPECT_EQ(mapped("dgx8", {{"CUDA_VISIBLE_DEVICES", j["uuid_form"]["CUDA_VISIBLE_DEVICES"].get<std::string>()}}),
            std::vector<std::string>{j["asked_cuda"][0]["uuid"].get<std::string>()});
  CliRun m = on("dgx8", with({"map", "cuda:4"}, env));
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("In this environment cuda:4 is nvidia-smi GPU 3"), std::string::npos) << m.out;
  CliRun bare = gpumap(with({"cuda:4", "--simulate", "dgx8"}, env));
  EXPECT_EQ(bare.out, m.out);
  // seed-mixed, default order: cuda:0 is the newer GPU 1.
  CliRun mixed = on("seed-mixed", {"which", "cuda:0"});
  EXPECT_EQ(mixed.out.rfind("In this environment cuda:0 is nvidia-smi GPU 1,", 0), 0u) << mixed.out;
  // A cuda:N that does not exist exits 2 and says which do.
  CliRun none = on("dgx8", with({"which", "cuda:8"}, env));
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("cuda:0..cuda:7"), std::string::npos) << none.err;
  EXPECT_EQ(on("dgx8", {"map", "GPU-"}).code, 2);
}

// Issue 43 item 1, as seen: `CUDA_VISIBLE_DEVICES=all gpumap doctor --simulate seed-mixed` gave
// container-keyword, list-cut-short and cuda-init-fails, three errors with one fix.  Now one finding,
// the others its evidence; ordinals-are-relative only with -v.
TEST(CliAdvice, OneFindingPerCause) {
  CliRun r = on("seed-mixed", {"doctor"}, {"CUDA_VISIBLE_DEVICES=all"});
  EXPECT_EQ(r.code, 7) << r.out << r.err;
  EXPECT_NE(r.out.find("[error] container-keyword"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("also list-cut-short: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("also cuda-init-fails: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("] list-cut-short"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("] cuda-init-fails"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 error(s), 0 warning(s), 0 info"), std::string::npos) << r.out;
  json j = json::parse(on("seed-mixed", {"doctor", "--json"}, {"CUDA_VISIBLE_DEVICES=all"}).out);
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["findings"][0]["id"], "container-keyword");
  ASSERT_EQ(j["findings"][0]["also"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["findings"][0]["also"][0]["id"], "list-cut-short");
  EXPECT_FALSE(j["findings"][0]["also"][0]["message"].get<std::string>().empty());
  EXPECT_TRUE(j["combined_fix"].is_null()) << j.dump(2);  // one cause, one fix
  // The reminder true of every list: only with -v.
  CliRun plain = on("dgx8", {"doctor"}, {"CUDA_VISIBLE_DEVICES=2,3"});
  EXPECT_EQ(plain.out.find("ordinals-are-relative"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("No traps found"), std::string::npos) << plain.out;
  // Issue 52 item 1: the numbering itself is said in one line, and never called what it looks like.
  EXPECT_NE(plain.out.find("\ncuda:0 = nvidia-smi GPU 2, cuda:1 = GPU 3\n"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("what it looks like"), std::string::npos) << plain.out;
  CliRun verbose = on("dgx8", {"doctor", "-v"}, {"CUDA_VISIBLE_DEVICES=2,3"});
  EXPECT_NE(verbose.out.find("[info] ordinals-are-relative"), std::string::npos) << verbose.out;
}

// Issue 43 item 2, as seen: two causes, each fix leaving the other.  doctor ends with one line for
// both (text and --json), and pasted it leaves no warning or error.
TEST(CliAdvice, OneCombinedFix) {
  const std::vector<std::string> env = {"NVIDIA_VISIBLE_DEVICES=5", "SLURM_STEP_GPUS=2,3"};
  const std::string line = "unset NVIDIA_VISIBLE_DEVICES; export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3";
  CliRun r = on("dgx8", {"doctor"}, env);
  EXPECT_NE(r.out.find("All the fixes above in one line:\n  " + line + "\n"), std::string::npos) << r.out;
  json j = json::parse(on("dgx8", {"doctor", "--json"}, env).out);
  EXPECT_EQ(j["combined_fix"], line) << j.dump(2);
  // Pasted into a real bash whose environment has the two mistakes, then doctor there.
  CliRun after = run_program({"/bin/bash", "--norc", "--noprofile", "-c",
                              line + "; exec \"$0\" doctor --json --simulate dgx8", GPUMAP_BINARY},
                             env);
  json a = json::parse(after.out);
  for (const json& f : a["findings"]) EXPECT_EQ(f["severity"], "info") << f.dump();
  EXPECT_TRUE(a["combined_fix"].is_null());
  json m = json::parse(on("dgx8", {"map", "--json", "--env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "--env", "CUDA_VISIBLE_DEVICES=2,3"}).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 2u);
  EXPECT_EQ(m["cuda"]["devices"][0]["nvml_index"], 2);
  EXPECT_EQ(m["cuda"]["devices"][1]["nvml_index"], 3);
}

}  // namespace
}  // namespace gpumap::testing
