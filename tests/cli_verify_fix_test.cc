// Black-box: `gpumap verify` names the CUDA_VISIBLE_DEVICES value that fixes a mismatch (pasting it
// makes verify pass), and takes MIG device UUIDs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>
#include <tuple>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

const std::string kMig0 = "MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd";  // hosts/mig.json: GPU 0's first MIG device
const std::string kMig1 = "MIG-7a360cfe-db46-0c91-2ca2-81816070806d";

CliRun verify(std::vector<std::string> args, const std::vector<std::string>& env, const std::string& host) {
  args.insert(args.begin(), "verify");
  args.push_back("--simulate");
  args.push_back(host);
  return gpumap(args, env);
}

TEST(CliVerifyFix, PastingTheFixMakesVerifyPass) {
  // seed-mixed under FASTEST_FIRST: cuda:0 is nvidia-smi GPU 1, so expecting 0,2 in order fails.
  CliRun r = verify({"--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=0,2"}, "seed-mixed");
  ASSERT_EQ(r.code, 4) << r.out << r.err;
  std::string tag = "fix (before CUDA starts): export CUDA_VISIBLE_DEVICES=";
  size_t at = r.out.find(tag);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string value = r.out.substr(at + tag.size(), r.out.find('\n', at) - at - tag.size());
  CliRun j = verify({"--json", "--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=0,2"}, "seed-mixed");
  EXPECT_EQ(json::parse(j.out)["fix"]["CUDA_VISIBLE_DEVICES"], value);
  CliRun pasted = verify({"--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=" + value}, "seed-mixed");
  EXPECT_EQ(pasted.code, 0) << pasted.out << pasted.err;
  EXPECT_TRUE(json::parse(verify({"--json", "--expect", "0,2"}, {"CUDA_VISIBLE_DEVICES=" + value}, "seed-mixed").out)["fix"]
                  .is_null());
}

TEST(CliVerifyFix, CudaWouldFailGetsTheFixToo) {
  CliRun r = verify({"--expect", "1"}, {"CUDA_VISIBLE_DEVICES=0,0"}, "seed-mixed");
  EXPECT_EQ(r.code, 5);
  EXPECT_NE(r.out.find("export CUDA_VISIBLE_DEVICES=GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b\n"), std::string::npos) << r.out;
}

// Issue 22.3: under an invalid CUDA_DEVICE_ORDER no CUDA_VISIBLE_DEVICES helps (cuInit fails first):
// the fix names the order, and the list only when PCI_BUS_ID does not already give the expected GPUs.
TEST(CliVerifyFix, AnInvalidOrderIsFixedByTheOrder) {
  const std::string tag = "fix (before CUDA starts): export ";
  for (const auto& [cvd, expect, fix] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"CUDA_VISIBLE_DEVICES=0", "0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
           {"", "0,1,2,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
           {"CUDA_VISIBLE_DEVICES=0", "1",
            "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b"}}) {
    std::vector<std::string> env = {"CUDA_DEVICE_ORDER=pci_bus_id"};
    if (!cvd.empty()) env.push_back(cvd);
    CliRun r = verify({"--expect", expect}, env, "seed-mixed");
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    size_t at = r.out.find(tag);
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string line = r.out.substr(at + tag.size(), r.out.find('\n', at) - at - tag.size());
    EXPECT_EQ(line, fix) << cvd << " expect " << expect;
    json j = json::parse(verify({"--json", "--expect", expect}, env, "seed-mixed").out);
    EXPECT_EQ(j["fix"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
    // Pasting it: its assignments replace the environment's values.
    std::map<std::string, std::string> vars;
    for (const std::string& e : env) vars[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
    std::istringstream words(line);
    for (std::string w; words >> w;) vars[w.substr(0, w.find('='))] = w.substr(w.find('=') + 1);
    std::vector<std::string> pasted;
    for (const auto& [k, v] : vars) pasted.push_back(k + "=" + v);
    CliRun again = verify({"--expect", expect}, pasted, "seed-mixed");
    EXPECT_EQ(again.code, 0) << line << ": " << again.out << again.err;
  }
}

TEST(CliVerifyFix, MigDeviceUuidsAndPrefixes) {
  EXPECT_EQ(verify({"--expect", kMig1}, {"CUDA_VISIBLE_DEVICES=" + kMig1}, "mig").code, 0);
  EXPECT_EQ(verify({"--expect", kMig1.substr(0, 12)}, {"CUDA_VISIBLE_DEVICES=" + kMig1}, "mig").code, 0);
  CliRun wrong = verify({"--expect", kMig0}, {"CUDA_VISIBLE_DEVICES=" + kMig1}, "mig");
  EXPECT_EQ(wrong.code, 4) << wrong.out;
  EXPECT_NE(wrong.out.find("MIG device 0"), std::string::npos) << wrong.out;
  CliRun none = verify({"--expect", "MIG-0000"}, {}, "mig");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("MIG-0000"), std::string::npos) << none.err;
  CliRun ambiguous = verify({"--expect", "MIG-"}, {}, "mig");
  EXPECT_EQ(ambiguous.code, 2);
  EXPECT_NE(ambiguous.err.find("starts 2 MIG device UUIDs"), std::string::npos) << ambiguous.err;
}

}  // namespace
}  // namespace gpumap::testing
