// Issue 22.4, black-box: CUDA_VISIBLE_DEVICES naming GPUs outside the Slurm step's allocation is an
// error (no device cgroup on the simulated hosts), and its fix gives the allocated GPUs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuple>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

json doctor(const std::string& host, const std::vector<std::string>& env) {
  std::vector<std::string> args = {"doctor", "--json", "--simulate", host};
  for (const std::string& e : env) args.insert(args.end(), {"--env", e});
  CliRun r = gpumap_here(args);
  return json::parse(r.out);
}

const json* finding(const json& d, const std::string& id) {
  for (const json& f : d["findings"])
    if (f["id"] == id) return &f;
  return nullptr;
}

TEST(CliSlurmAllocation, TheIssuesTwoCases) {
  for (const auto& [host, env, fix] : std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>{
           {"dgx8",
            {"SLURM_STEP_GPUS=2,3", "SLURM_JOB_GPUS=2,3", "CUDA_VISIBLE_DEVICES=5,6", "SLURM_LOCALID=0"},
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3  # nvidia-smi GPU 5, nvidia-smi GPU 6 left out: "
            "outside SLURM_STEP_GPUS=2,3; the allocation's GPUs instead"},
           {"seed-mixed", {"SLURM_STEP_GPUS=1,2", "CUDA_VISIBLE_DEVICES=1,2"},
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,2"}}) {
    json d = doctor(host, env);
    const json* f = finding(d, "outside-allocation");
    ASSERT_NE(f, nullptr) << host << ": " << d["findings"].dump(1);
    EXPECT_EQ((*f)["severity"], "error");
    EXPECT_EQ((*f)["fix"], fix);
    EXPECT_EQ(finding(d, "slurm-global-ids"), nullptr) << host << ": the false info line is back";
    // Pasted, the step sees its own GPUs and doctor has nothing above info.
    std::vector<std::string> pasted = {env[0], "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                       fix.substr(fix.find("CUDA_VISIBLE_DEVICES="), fix.find("  #") - fix.find("CUDA_VISIBLE_DEVICES="))};
    json after = doctor(host, pasted);
    EXPECT_EQ(after["counts"]["error"], 0) << after["findings"].dump(1);
    EXPECT_EQ(after["counts"]["warning"], 0) << after["findings"].dump(1);
  }
}

}  // namespace
}  // namespace gpumap::testing
