#include "session/job.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "resolve/job_view_testing.h"

namespace gpumap {
namespace {

using testing_job::ps_doc;

// A fake Slurm: scontrol names job 5 on n1 and n2 with GPUs 0-1 each; srun answers with the
// labelled ps documents given (task -> document) and srun's stderr.
struct FakeSlurm {
  std::map<int, std::string> ps;
  std::string srun_err;
  bool srun_timed_out = false;
  std::vector<std::vector<std::string>> calls;

  RunProgram runner() {
    return [this](std::vector<std::string> argv, int) {
      calls.push_back(argv);
      ProcResult r;
      r.exit_code = 0;
      if (argv[0] == "scontrol") {
        r.out = "JobId=5 JobName=t\n   NodeList=n[1-2]\n     Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)\n";
        return r;
      }
      for (auto& [task, doc] : ps) r.out += std::to_string(task) + ": " + doc + "\n";
      r.err = srun_err;
      r.timed_out = srun_timed_out;
      if (!srun_err.empty() || srun_timed_out) r.exit_code = 233;
      return r;
    };
  }
};

Session session_with(std::vector<std::string> env) {
  return Session(DriverSource{}, Environment::from_strings(env), Seams{});
}

TEST(ReadJob, AsksScontrolThenOnePsPerNodeWithThisGpumap) {
  FakeSlurm slurm;
  slurm.ps = {{0, ps_doc("n1", {{11, 0, "5", "0"}})}, {1, ps_doc("n2", {{21, 1, "5", "1"}})}};
  Session s = session_with({"SLURM_JOB_ID=5"});
  JobRun run = read_job(s, JobRequest{}, slurm.runner(), "/opt/gpumap/bin/gpumap");
  ASSERT_EQ(slurm.calls.size(), 2u);
  EXPECT_EQ(slurm.calls[0], (std::vector<std::string>{"scontrol", "show", "job", "-d", "5"}));
  EXPECT_EQ(slurm.calls[1][0], "srun");
  EXPECT_NE(std::find(slurm.calls[1].begin(), slurm.calls[1].end(), "/opt/gpumap/bin/gpumap"), slurm.calls[1].end());
  EXPECT_NE(std::find(slurm.calls[1].begin(), slurm.calls[1].end(), "--nodes=2"), slurm.calls[1].end());
  EXPECT_EQ(run.report.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(run.report.processes.size(), 2u);
  EXPECT_TRUE(run.report.allocation_known);
  EXPECT_TRUE(run.report.missing_nodes.empty());
  EXPECT_TRUE(run.missing_why.empty());
}

TEST(ReadJob, ANodeThatDoesNotAnswerIsNamedWithSrunsOwnWords) {
  FakeSlurm slurm;
  slurm.ps = {{0, ps_doc("n1", {{11, 0, "5", "0"}})}};
  slurm.srun_err = "srun: error: Task launch for StepId=5.1 failed on node n2: Communication connection failure\n";
  Session s = session_with({});
  JobRun run = read_job(s, JobRequest{.job_id = "5"}, slurm.runner(), "/g");
  EXPECT_EQ(run.report.missing_nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(run.missing_why.at("n2"),
            "it did not answer (is its slurmd up? scontrol show node n2); srun: error: Task launch for StepId=5.1 "
            "failed on node n2: Communication connection failure");
  slurm.srun_err.clear();
  slurm.srun_timed_out = true;
  run = read_job(s, JobRequest{.job_id = "5", .timeout_ms = 2000, .timeout_name = "--timeout"}, slurm.runner(), "/g");
  EXPECT_EQ(run.missing_why.at("n2"), "it did not answer within 2 s (--timeout)");
}

TEST(ReadJob, BadInputIsAnErrorBeforeSlurmIsAsked) {
  FakeSlurm slurm;
  Session s = session_with({});
  try {
    read_job(s, JobRequest{}, slurm.runner(), "/g");
    FAIL() << "no job id: no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("$SLURM_JOB_ID is not set"), std::string::npos);
  }
  EXPECT_THROW(read_job(s, JobRequest{.job_id = "5;rm"}, slurm.runner(), "/g"), Error);
  EXPECT_TRUE(slurm.calls.empty());
}

TEST(ReadJob, NoNodeAnsweringIsAnErrorNamingThePathEveryNodeNeeds) {
  FakeSlurm slurm;
  slurm.srun_err = "srun: error: Unable to create step for job 5\n";
  Session s = session_with({});
  try {
    read_job(s, JobRequest{.job_id = "5"}, slurm.runner(), "/opt/g/gpumap");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitError);
    EXPECT_NE(std::string(e.what()).find("no node of job 5 answered (srun exit 233)"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("/opt/g/gpumap"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpumap
