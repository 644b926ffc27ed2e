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
  // Each is one per GPU, and none has a fix to paste: the remedy is the job's own srun line or
  // its program, said in the note.
  for (const Finding& f : r.findings) {
    EXPECT_EQ(f.fix, "") << f.id << ": prose is not a fix: " << f.fix;
    EXPECT_FALSE(f.note.empty()) << f.id;
  }
  EXPECT_NE(r.findings[0].note.find("gpumap bind -- <your command>"), std::string::npos) << r.findings[0].note;
  EXPECT_NE(r.findings[1].note.find("ask for fewer GPUs"), std::string::npos) << r.findings[1].note;
}

TEST(JobRules, NoIdleOrOutsideFindingsWithoutAnAllocation) {
  JobReport r = report({{0, ps_doc("n1", {{10, 0, "5", "0"}})}, {1, "gpumap: command not found\n"}}, {});
  EXPECT_FALSE(r.allocation_known);
  EXPECT_TRUE(r.findings.empty());
}

size_t count(const JobReport& r, const std::string& id) {
  size_t n = 0;
  for (const Finding& f : r.findings) n += f.id == id;
  return n;
}

const Finding* find(const JobReport& r, const std::string& id) {
  for (const Finding& f : r.findings)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(JobRules, ARankOnAnotherRanksGpuIsOnTheWrongGpuOnItsNode) {
  // Node n1: local rank 0 on GPU 0 (right); local rank 1 also on GPU 0 (its cuda:1 is GPU 1).
  // Node n2: local rank 1 on GPU 1 and GPU 0 (a stray context); local rank 0 narrowed to one GPU.
  JobReport r = report({{0, ps_doc_ranks("n1", {{10, 0, "0", 0, 4, 300}, {11, 0, "1", 1, 4, 300}})},
                        {1, ps_doc_ranks("n2", {{20, 0, "3", 1, 4, 500}, {20, 1, "3", 1, 4, 900}, {21, 2, "2", 0, 1, 50}})}},
                       {});
  // One cause per GPU: n1's GPU 0 is shared because rank 1 works there (its rank-on-wrong-gpu folded
  // into the GPU's finding, at its severity); n2's GPU 0 only through rank 3's stray context.
  EXPECT_EQ(count(r, "rank-on-wrong-gpu"), 0u) << ::testing::PrintToString(ids_of(r));
  EXPECT_EQ(count(r, "job-ranks-share-gpu"), 1u) << ::testing::PrintToString(ids_of(r));
  EXPECT_EQ(count(r, "stray-context"), 1u) << "one per process, not per row";
  const Finding* share = find(r, "job-ranks-share-gpu");
  ASSERT_NE(share, nullptr);
  EXPECT_NE(share->message.find("on n1"), std::string::npos) << share->message;
  EXPECT_EQ(share->severity, Severity::kError);
  ASSERT_EQ(share->also.size(), 1u);
  EXPECT_EQ(share->also[0].id, "rank-on-wrong-gpu");
  const std::string& w = share->also[0].message;
  for (const char* part : {"rank 1 (pid 11) on n1", "SLURM_LOCALID=1", "sees 4 GPUs",
                           "nvidia-smi GPU 0 (GPU-0) on n1, its cuda:0 (300 MiB)", "its cuda:1 is nvidia-smi GPU 1 (GPU-1) on n1"})
    EXPECT_NE(w.find(part), std::string::npos) << part << " in " << w;
  EXPECT_EQ(share->fix, "");
  const Finding* s = find(r, "stray-context");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->severity, Severity::kWarning);
  for (const char* part : {"rank 3 (pid 20) on n2", "its cuda:1 is nvidia-smi GPU 1 (GPU-1) on n2, 900 MiB",
                           "nvidia-smi GPU 0 (GPU-0) on n2, its cuda:0 (500 MiB)"})
    EXPECT_NE(s->message.find(part), std::string::npos) << part << " in " << s->message;
}

TEST(JobRules, AGpuSharedOnlyThroughAStrayContextIsTheStrayContextsFinding) {
  // Rank 1 works on its own GPU 1 and holds a stray context on GPU 0, rank 0's: one cause, said once.
  JobReport r = report({{0, ps_doc_ranks("n1", {{10, 0, "0", 0, 4, 2000}, {11, 1, "1", 1, 4, 2000}, {11, 0, "1", 1, 4, 500}})}}, {});
  EXPECT_EQ(count(r, "job-ranks-share-gpu"), 0u) << ::testing::PrintToString(ids_of(r));
  EXPECT_EQ(count(r, "rank-on-wrong-gpu"), 0u) << ::testing::PrintToString(ids_of(r));
  const Finding* s = find(r, "stray-context");
  ASSERT_NE(s, nullptr) << ::testing::PrintToString(ids_of(r));
  ASSERT_EQ(s->also.size(), 1u) << "the GPU it shares through the stray context, said with it";
  EXPECT_EQ(s->also[0].id, "job-ranks-share-gpu");
  EXPECT_NE(s->also[0].message.find("nvidia-smi GPU 0 (GPU-0) on n1 with rank(s) 0"), std::string::npos) << s->also[0].message;
}

TEST(JobRules, KeepVisibleRanksAreJudgedByTheirCudaZero) {
  // bind --keep-visible on n1: rank 1 sees 1,2,3,0 and works on GPU 1 (its cuda:0, its own);
  // rank 2 sees 2,3,0,1 but works on GPU 0, its cuda:2 = cuda:$SLURM_LOCALID: another rank's GPU.
  auto row = [](int pid, int gpu, const std::string& rank, int local, int ordinal) {
    return row_start(pid, gpu, "5", rank, 300) + ", \"cuda_ordinal\": " + std::to_string(ordinal) +
           ", \"rank_variable\": \"SLURM_LOCALID\", \"rank_value\": " + std::to_string(local) +
           ", \"cuda_device_count\": 4, \"rank_nvml_index\": " + std::to_string(local) + ", \"bound_own_gpus\": 1}";
  };
  JobReport r = report({{0, ps_doc_rows("n1", row(30, 1, "1", 1, 0) + "," + row(31, 0, "2", 2, 2))}}, {});
  EXPECT_EQ(count(r, "rank-on-wrong-gpu"), 1u) << ::testing::PrintToString(ids_of(r));
  const Finding* w = find(r, "rank-on-wrong-gpu");
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->message.find("rank 2 (pid 31) on n1"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find("its own GPU, cuda:0"), std::string::npos) << w->message;
  EXPECT_EQ(count(r, "stray-context"), 0u);
}

TEST(JobRules, RowsWithoutRankFactsGetNoRankFindings) {
  // An older gpumap's ps on a node (no rank_value / cuda_device_count): nothing is guessed.
  JobReport r = report({{0, ps_doc("n1", {{10, 0, "5", "0"}, {11, 0, "5", "1"}})}}, {});
  EXPECT_EQ(count(r, "rank-on-wrong-gpu"), 0u);
  EXPECT_EQ(count(r, "stray-context"), 0u);
}

}  // namespace
}  // namespace gpumap
