// Black-box tests of what gpumap does inside Slurm steps, without Slurm: device cgroups through
// the host file's dev_dir, Slurm 25.11's UUIDs, the TaskProlog line, `job` usage.  The same
// commands inside a real Slurm: tests/slurm/slurm_test.sh (ctest: slurm).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

const char* kUuid[] = {"GPU-5a000000-0000-4000-8000-000000000000", "GPU-5a000000-0000-4000-8000-000000000001",
                       "GPU-5a000000-0000-4000-8000-000000000002", "GPU-5a000000-0000-4000-8000-000000000003"};

// Four H200s whose minor numbers run opposite to PCI order (nvidia3 is the first by bus id), and
// a device folder holding only the nodes in `nodes`: the job may open those and no others.
std::string cgroup_host(const std::vector<int>& nodes) {
  std::string dev = temp_dir("dev");
  for (int n : nodes) std::ofstream(dev + "/nvidia" + std::to_string(n)) << "";
  std::string gpus;
  for (int i = 0; i < 4; ++i)
    gpus += std::string(i ? "," : "") + "{\"name\": \"NVIDIA H200\", \"uuid\": \"" + kUuid[i] +
            "\", \"pci_bus_id\": \"00000000:1" + std::to_string(i) + ":00.0\", \"minor_number\": " +
            std::to_string(3 - i) + "}";
  return write_temp_file("cgroup-host.json", "{\"dev_dir\": \"" + dev + "\", \"gpus\": [" + gpus + "]}");
}

TEST(CliSlurm, DevDirShowsOnlyTheGpusWhoseNodesOpenRenumberedInPciOrder) {
  std::string host = cgroup_host({0, 2});  // nvidia0 = 4th GPU by bus id, nvidia2 = 2nd
  CliRun r = gpumap_here({"list", "--json", "--simulate", host});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["uuid"], kUuid[1]);
  EXPECT_EQ(j["gpus"][0]["nvml_index"], 0);
  EXPECT_EQ(j["gpus"][1]["uuid"], kUuid[3]);
  EXPECT_EQ(j["gpus"][1]["nvml_index"], 1);

  // Slurm under device cgroups: SLURM_STEP_GPUS=0,2 (global), CUDA_VISIBLE_DEVICES=0,1 (renumbered).
  // The driver's own view (--probe runs the fake libcuda) agrees with the prediction.
  std::vector<std::string> env = {"SLURM_STEP_GPUS=0,2", "CUDA_VISIBLE_DEVICES=0,1", "SLURM_JOB_ID=7"};
  r = gpumap_here({"map", "--json", "--check", "--simulate", host}, env);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  j = json::parse(r.out);
  ASSERT_EQ(j["cuda"]["devices"].size(), 2u);
  EXPECT_EQ(j["cuda"]["devices"][0]["uuid"], kUuid[1]);
  EXPECT_EQ(j["cuda"]["devices"][1]["uuid"], kUuid[3]);
  EXPECT_TRUE(j["check"]["agree"].get<bool>());
  r = gpumap_here({"doctor", "--simulate", host}, env);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("[warning]"), std::string::npos) << r.out;

  // Code that takes Slurm's ids as CUDA indices: index 2 does not exist in this step, so CUDA
  // stops the list there and the job silently runs on one GPU.
  r = gpumap_here({"doctor", "--simulate", host}, {"SLURM_STEP_GPUS=0,2", "CUDA_VISIBLE_DEVICES=0,2"});
  // The id used as an index is the cause, the cut its evidence (findings/fold.h, issue 43).
  EXPECT_NE(r.out.find("[warning] slurm-global-id-as-index"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("also list-cut-short: "), std::string::npos) << r.out;
}

TEST(CliSlurm, Slurm2511UuidsInCudaVisibleDevicesNameThePhysicalGpus) {
  // Slurm 25.11 writes the allocated GPUs' UUIDs into CUDA_VISIBLE_DEVICES.
  std::string host = cgroup_host({0, 1, 2, 3});
  std::vector<std::string> env = {"SLURM_STEP_GPUS=1,2", std::string("CUDA_VISIBLE_DEVICES=") + kUuid[2] + "," + kUuid[1]};
  CliRun r = gpumap_here({"verify", "--expect", std::string(kUuid[2]) + "," + kUuid[1], "--simulate", host}, env);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = gpumap_here({"doctor", "--simulate", host}, env);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("[warning]"), std::string::npos) << r.out;
}

TEST(CliSlurm, MapLineIsOneLineWithRankNodeGpusAndTraps) {
  std::string host = cgroup_host({0, 1, 2, 3});
  CliRun r = gpumap_here({"map", "--line", "--simulate", host},
                    {"SLURM_PROCID=3", "SLURMD_NODENAME=node7", "CUDA_VISIBLE_DEVICES=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("gpumap: rank 3 on node7: cuda:0 = nvidia-smi 1 ") + kUuid[1] + "; 0 finding(s)\n");
  r = gpumap_here({"map", "--line", "--simulate", host}, {"CUDA_VISIBLE_DEVICES=1", "LOCAL_RANK=2"});
  EXPECT_EQ(r.out, std::string("gpumap: cuda:0 = nvidia-smi 1 ") + kUuid[1] +
                       "; 1 finding(s): local-rank-exceeds-visible (run gpumap doctor)\n");
}

TEST(CliSlurm, JobNeedsAJobId) {
  CliRun r = gpumap_here({"job", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("SLURM_JOB_ID"), std::string::npos) << r.err;
  r = gpumap_here({"job", "12;rm", "--simulate", "h200x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a Slurm job id"), std::string::npos) << r.err;
}

// A hung scontrol: the error says it timed out (it said "failed: " and nothing).
TEST(CliSlurm, ATimedOutScontrolSaysSo) {
  std::string bin = temp_dir("slurm-bin");
  {
    std::ofstream f(bin + "/scontrol");
    f << "#!/bin/sh\nexec sleep 30\n";
  }
  chmod((bin + "/scontrol").c_str(), 0755);
  CliRun r = gpumap({"job", "5", "--timeout", "1", "--simulate", "h200x2"}, {"PATH=" + bin + ":/usr/bin:/bin"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("scontrol show job 5 timed out after 1 s"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("failed: \n"), std::string::npos) << r.err;
  std::filesystem::remove_all(bin);
}

// Stand-ins for scontrol and srun: job 5 on nodes n1 and n2, but only n1's ps answers (n2's
// slurmd is down: the real srun, Slurm 22.05, prints n1's output, then the line below, and exits
// 233 after ~10 s).  With `hang`, srun waits instead, as for a hung node.
std::string partial_slurm_bin(bool hang) {
  std::string bin = temp_dir("slurm-bin");
  std::ofstream(bin + "/scontrol") << "#!/bin/sh\necho 'JobId=5 JobName=t'\necho '   NodeList=n[1-2]'\n"
                                      "echo '     Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)'\n";
  // argv: --jobid=5 --overlap --nodes=2 --ntasks=2 --ntasks-per-node=1 --gres=gpu:2 --label --quiet --kill-on-bad-exit=0 GPUMAP ps ...
  std::ofstream(bin + "/srun") << "#!/bin/sh\nshift 9\nSLURMD_NODENAME=n1 \"$@\" | sed 's/^/0: /'\n"
                               << (hang ? "exec sleep 30\n"
                                        : "echo 'srun: error: Task launch for StepId=5.1 failed on node n2: "
                                          "Communication connection failure' >&2\nexit 233\n");
  chmod((bin + "/scontrol").c_str(), 0755);
  chmod((bin + "/srun").c_str(), 0755);
  return bin;
}

TEST(CliSlurm, JobWithANodeThatDoesNotAnswerIsAPartialReportExit9) {
  std::string bin = partial_slurm_bin(false);
  CliRun r = gpumap({"job", "5", "--simulate", "h200x2"}, {"PATH=" + bin + ":/usr/bin:/bin"});
  EXPECT_EQ(r.code, 9) << r.out << r.err;
  EXPECT_NE(r.out.find("job 5: 1 node(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no report from node n2: it did not answer (is its slurmd up? scontrol show node n2); "
                       "srun: error: Task launch for StepId=5.1 failed on node n2: Communication connection failure"),
            std::string::npos)
      << r.out;
  r = gpumap({"job", "5", "--json", "--simulate", "h200x2"}, {"PATH=" + bin + ":/usr/bin:/bin"});
  EXPECT_EQ(r.code, 9) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["nodes"], json::array({"n1"}));
  EXPECT_EQ(j["missing_nodes"], json::array({"n2"}));
  std::filesystem::remove_all(bin);
}

TEST(CliSlurm, JobWhoseSrunTimesOutReportsTheNodesThatAnswered) {
  std::string bin = partial_slurm_bin(true);
  CliRun r = gpumap({"job", "5", "--timeout", "1", "--simulate", "h200x2"}, {"PATH=" + bin + ":/usr/bin:/bin"});
  EXPECT_EQ(r.code, 9) << r.out << r.err;
  EXPECT_NE(r.out.find("no report from node n2: it did not answer within 1 s (--timeout)"), std::string::npos) << r.out;
  std::filesystem::remove_all(bin);
}

}  // namespace
}  // namespace gpumap::testing
