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
#include "fleet/fake_prometheus.h"
#include "fleet/fleet_fixture.h"
#include "json_contract.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::ordered_json;

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
  FakePrometheusServer prometheus(three_node_fleet());  // `fleet` over real HTTP, from memory
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
      // Without a kubelet (its pods and their objects: tests/kube/pods_cases.cc, with a real one).
      {"pods", {"pods", "--simulate", ps_host}, {"GPUMAP_KUBELET_SOCKET=/nonexistent/kubelet.sock"}},
      {"fleet", {"fleet", "--prometheus", prometheus.url()}},
      {"fleet", {"fleet"}, {"GPUMAP_PROMETHEUS=" + prometheus.url()}},
      {"health", {"health", "--simulate", host_path("xid-faults")}},
  };
  for (Case& c : cases) {
    if (std::find(c.args.begin(), c.args.end(), "--json") == c.args.end()) c.args.insert(c.args.begin() + 1, "--json");
    c.env.push_back("GPUMAP_LOCK_DIR=" + locks);
    c.env.push_back("GPUMAP_IN_CONTAINER=0");
    // run and bind start a command: the built binary; the rest in process (tests/cli_helpers.h).
    CliRun r = c.type == "run" || c.type == "bind" ? gpumap(c.args, c.env) : gpumap_here(c.args, c.env);
    std::string label;
    for (const std::string& a : c.args) label += a + " ";
    const std::string& text = c.on_stderr ? r.err : r.out;
    json j = json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << label << "is not one JSON document:\n" << text << r.err;
    EXPECT_EQ(checker.check(j, c.type, c.type), "") << label;
  }
  // Every object of the table was met: no row documents a key nothing prints.  A pod's objects
  // need a kubelet: Pods.* (tests/kube/pods_cases.cc) checks them against this table.
  for (const auto& [name, _] : checker.contract())
    if (name.rfind("pod_", 0) != 0) {
      EXPECT_TRUE(checker.checked().count(name)) << "no command's output exercised `" << name << "`";
    }
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
