#include "findings/job_rules.h"

#include <gtest/gtest.h>

#include "resolve/job_view_testing.h"

namespace gpumap {
namespace {

using namespace testing_job;

// The report as `gpumap job` gets it: the join (resolve/job_view_test.cc tests its facts), then the rules.
JobReport report(const std::map<int, std::string>& ps_per_task, const std::map<std::string, std::vector<uint32_t>>& alloc) {
  JobReport r = join_job_report("5", ps_per_task, alloc);
  r.findings = job_findings(r);
  return r;
}

std::vector<std::string> ids_of(const JobReport& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) out.push_back(f.id + " " + severity_name(f.severity));
  return out;
}

TEST(JobRules, ACleanJobHasNoFindings) {
  JobReport r = report({{0, ps_doc("n1", {{10, 0, "5", "0"}, {11, 1, "5", "1"}, {12, 2, "9", "0"}})}}, {{"n1", {0, 1}}});
  EXPECT_TRUE(r.findings.empty()) << ::testing::PrintToString(ids_of(r));
}

TEST(JobRules, SharedOutsideAndIdleGpusAcrossNodes) {
  JobReport r = report(
      {{0, ps_doc("n1", {{10, 0, "5", "0"}, {11, 0, "5", "1"}})},  // ranks 0 and 1 share GPU 0; GPU 1 idle
       {1, ps_doc("n2", {{20, 0, "5", "2"}, {21, 3, "5", "3"}, {22, 3, "5", "3"}})}},  // rank 3 on GPU 3: not allocated
      {{"n1", {0, 1}}, {"n2", {0}}});
  EXPECT_EQ(ids_of(r), (std::vector<std::string>{"job-ranks-share-gpu warning", "job-gpu-idle warning",
                                                 "job-gpu-outside-allocation error"}));
  EXPECT_NE(r.findings[0].message.find("ranks 0, 1"), std::string::npos) << r.findings[0].message;
  EXPECT_NE(r.findings[2].message.find("GPU-3"), std::string::npos);
}

TEST(JobRules, NoIdleOrOutsideFindingsWithoutAnAllocation) {
  JobReport r = report({{0, ps_doc("n1", {{10, 0, "5", "0"}})}, {1, "gpumap: command not found\n"}}, {});
  EXPECT_FALSE(r.allocation_known);
  EXPECT_TRUE(r.findings.empty());
}

}  // namespace
}  // namespace gpumap
