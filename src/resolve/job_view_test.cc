#include "resolve/job_view.h"

#include <gtest/gtest.h>

#include "resolve/job_view_testing.h"

namespace gpumap {
namespace {

using namespace testing_job;

TEST(JobView, FanoutIsOnePsPerNodeThroughSrunIntoTheJob) {
  EXPECT_EQ(job_fanout_argv("/usr/bin/srun", "42", "/opt/gpumap", {"--simulate", "h.json"}),
            (std::vector<std::string>{"/usr/bin/srun", "--jobid=42", "--overlap", "--ntasks-per-node=1", "--label",
                                      "--quiet", "--kill-on-bad-exit=0", "/opt/gpumap", "ps", "--json", "--simulate",
                                      "h.json"}));
  // From a login node srun --jobid starts one task unless told how many nodes: every node, once.
  // and, to see all the job's GPUs of a node, asks for them (not the job's --gpus-per-task).
  EXPECT_EQ(job_fanout_argv("srun", "42", "/opt/gpumap", {}, 3, 2),
            (std::vector<std::string>{"srun", "--jobid=42", "--overlap", "--nodes=3", "--ntasks=3",
                                      "--ntasks-per-node=1", "--gres=gpu:2", "--label", "--quiet",
                                      "--kill-on-bad-exit=0", "/opt/gpumap", "ps", "--json"}));
}

TEST(JobView, OneGpuCountForEveryNodeOrNone) {
  std::map<std::string, std::vector<uint32_t>> a = {{"n1", {0, 1}}, {"n2", {2, 3}}, {"n3", {0}}, {"n4", {}}};
  EXPECT_EQ(uniform_gpus_per_node(a, {"n1", "n2"}), 2u);
  EXPECT_EQ(uniform_gpus_per_node(a, {"n1", "n3"}), 0u);  // 2 and 1: no single --gres
  EXPECT_EQ(uniform_gpus_per_node(a, {"n1", "n9"}), 0u);  // n9 not listed
  EXPECT_EQ(uniform_gpus_per_node(a, {"n4"}), 0u);
  EXPECT_EQ(uniform_gpus_per_node(a, {}), 0u);
}

TEST(JobView, SplitsLabelledOutputPerTask) {
  auto per = split_labelled_output("0: {\"a\":\n1: {\"b\": 2}\n 0: 1}\nsrun: warning\n10: x: y\n");
  ASSERT_EQ(per.size(), 3u);
  EXPECT_EQ(per[0], "{\"a\":\n1}\n");
  EXPECT_EQ(per[1], "{\"b\": 2}\n");
  EXPECT_EQ(per[10], "x: y\n");
}

TEST(JobView, ExpandsHostlists) {
  EXPECT_EQ(expand_hostlist("node[01-03,10],gpu5"),
            (std::vector<std::string>{"node01", "node02", "node03", "node10", "gpu5"}));
  EXPECT_EQ(expand_hostlist("a[3-1]"), (std::vector<std::string>{"a[3-1]"}));  // malformed: as is
}

TEST(JobView, ParsesTheGpuIdsPerNodeFromScontrol) {
  std::string text =
      "JobId=7 JobName=wrap\n   NumNodes=3 NumCPUs=4\n"
      "     Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:a100:2(IDX:0,2)\n"
      "     Nodes=n3 CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:3),shard:0(0/2,0/2)\n"
      "   TresPerNode=gres:gpu:2\n";
  auto ids = parse_job_gpu_ids(text);
  EXPECT_EQ(ids["n1"], (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(ids["n2"], (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(ids["n3"], (std::vector<uint32_t>{3}));
  EXPECT_TRUE(parse_job_gpu_ids("     Nodes=n4 CPU_IDs=0 Mem=0 GRES=\n").at("n4").empty());
}

TEST(JobView, ParsesTheJobsNodesFromScontrol) {
  std::string text =
      "JobId=7 JobName=wrap\n   ReqNodeList=n[1-2] ExcNodeList=(null)\n   NodeList=n[1-2],gpu07\n"
      "   BatchHost=n1\n     Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)\n";
  EXPECT_EQ(parse_job_nodes(text), (std::vector<std::string>{"n1", "n2", "gpu07"}));
  EXPECT_TRUE(parse_job_nodes("JobId=8 JobState=PENDING\n   ReqNodeList=(null)\n   NodeList=(null)\n").empty());
  EXPECT_TRUE(parse_job_nodes("").empty());
}

// A node whose slurmd is down or that hangs gives srun no output for it: the nodes that
// answered make the report, the silent one is named.
TEST(JobView, ANodeThatDoesNotAnswerIsMissingNotAFailure) {
  JobReport r = join_job_report("5", {{0, ps_doc("n1", {{10, 0, "5", "0"}, {11, 1, "5", "1"}})}},
                                 {{"n1", {0, 1}}, {"n2", {0, 1}}}, {"n1", "n2"});
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(r.missing_nodes, (std::vector<std::string>{"n2"}));
  EXPECT_TRUE(r.node_errors.empty());
  EXPECT_TRUE(r.allocation_known);
  EXPECT_EQ(r.processes.size(), 2u);
  // A node whose ps failed is a node error (by task) and, by name, missing.
  r = join_job_report("5", {{0, ps_doc("n1", {{10, 0, "5", "0"}})}, {1, "gpumap: command not found\n"}}, {},
                      {"n1", "n2"});
  EXPECT_EQ(r.missing_nodes, (std::vector<std::string>{"n2"}));
  EXPECT_EQ(r.node_errors.size(), 1u);
  EXPECT_TRUE(join_job_report("5", {{0, ps_doc("n1", {})}}, {}, {"n1"}).missing_nodes.empty());
}

TEST(JobView, ACleanJob) {
  JobReport r = join_job_report("5", {{0, ps_doc("n1", {{10, 0, "5", "0"}, {11, 1, "5", "1"}, {12, 2, "9", "0"}})}},
                                 {{"n1", {0, 1}}});
  EXPECT_TRUE(r.allocation_known);
  ASSERT_EQ(r.processes.size(), 2u);  // the other job's process is counted, not listed
  EXPECT_EQ(r.other_processes, 1u);
  EXPECT_EQ(r.processes[1].rank, "1");
  EXPECT_EQ(r.processes[1].node, "n1");
  EXPECT_TRUE(r.findings.empty()) << "the join makes no findings";
}

TEST(JobView, SharedOutsideAndIdleGpusAcrossNodes) {
  JobReport r = join_job_report(
      "5",
      {{0, ps_doc("n1", {{10, 0, "5", "0"}, {11, 0, "5", "1"}})},  // ranks 0 and 1 share GPU 0; GPU 1 idle
       {1, ps_doc("n2", {{20, 0, "5", "2"}, {21, 3, "5", "3"}, {22, 3, "5", "3"}})}},  // rank 3 on GPU 3: not allocated
      {{"n1", {0, 1}}, {"n2", {0}}});
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(r.processes.size(), 5u);
  EXPECT_EQ(r.gpus.size(), 8u);
  EXPECT_TRUE(r.gpus[0].allocated);
  EXPECT_FALSE(r.gpus[7].allocated);
}

TEST(JobView, JoinsLinesSrunCutIntoPieces) {
  std::string doc = ps_doc("n1", {{10, 0, "5", "0"}});
  std::string labelled;
  for (size_t i = 0; i < doc.size(); i += 7) labelled += "0: " + doc.substr(i, 7) + "\n";  // cut inside strings too
  JobReport r = join_job_report("5", split_labelled_output(labelled), {{"n1", {0}}});
  EXPECT_TRUE(r.node_errors.empty()) << r.node_errors[0];
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_EQ(r.processes[0].uuid, "GPU-0");
}

TEST(JobView, UnknownAllocationAndBrokenNodeOutput) {
  JobReport r = join_job_report("5", {{0, ps_doc("n1", {{10, 0, "5", "0"}})}, {1, "gpumap: command not found\n"}}, {});
  EXPECT_FALSE(r.allocation_known);  // no idle/outside findings without an allocation
  ASSERT_EQ(r.node_errors.size(), 1u);
  EXPECT_EQ(r.node_errors[0], "task 1: gpumap: command not found");
}

TEST(JobView, DeeplyNestedNodeOutputIsANodeErrorNotACrash) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']') + "\n";
  JobReport r = join_job_report("5", {{0, ps_doc("n1", {{10, 0, "5", "0"}})}, {1, deep}}, {{"n1", {0}}});
  ASSERT_EQ(r.node_errors.size(), 1u);
  EXPECT_EQ(r.node_errors[0], "task 1: not gpumap ps output (nested 100000 levels deep (at most 64))");
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"n1"}));
}

}  // namespace
}  // namespace gpumap
