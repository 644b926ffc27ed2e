// `gpumap ps` as an operation (session/ps.h) in process, on FakeSession hosts with a fixture
// /proc: each process's own cuda:N, the filters and their checks, --pid's and --fail-on's values,
// and the worst finding that --fail-on compares.  Golden cases: tests/golden/ps-*.json.
#include "session/ps.h"

#include <functional>
#include <map>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

using testing::FakeProcess;
using testing::FakeSession;

using testing::code_of;

/// h200x2 with two processes on GPU 1: 4001 sees only GPU 1 (its cuda:0), 4002 sees both in the
/// default order (its cuda:1); and 4003 on GPU 0 started with GPU 1 only (outside its set).
void add_processes(FakeSession& f) {
  f.with_process(1, {.pid = 4001, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1", "SLURM_JOB_ID=77"}, .uid = 1000});
  f.with_process(1, {.pid = 4002, .environ = std::vector<std::string>{}, .uid = 0});
  f.with_process(0, {.pid = 4003, .environ = std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1"}, .uid = 0});
}

const ProcessRow* row_of(const PsFrame& frame, uint32_t pid) {
  for (const ProcessRow& r : frame.result.rows)
    if (r.pid == pid) return &r;
  return nullptr;
}

TEST(ReadPsFrame, EachProcessSeesItsOwnCudaOrdinal) {
  FakeSession f("h200x2");
  add_processes(f);
  PsFrame frame = read_ps_frame(f.session());
  ASSERT_EQ(frame.result.rows.size(), 3u);
  const ProcessRow* a = row_of(frame, 4001);
  const ProcessRow* b = row_of(frame, 4002);
  const ProcessRow* c = row_of(frame, 4003);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->cuda_ordinal, std::optional<int>(0));
  EXPECT_EQ(a->cuda_visible_devices, std::optional<std::string>("1"));
  EXPECT_EQ(a->slurm_job_id, std::optional<std::string>("77"));
  EXPECT_EQ(b->cuda_ordinal, std::optional<int>(1));
  EXPECT_FALSE(c->cuda_ordinal) << "GPU 0 is outside its visible set";
  bool outside = false;
  for (const Finding& x : c->findings) outside |= x.id == "outside-visible-set";
  EXPECT_TRUE(outside);
  EXPECT_EQ(ps_worst(frame.result), Severity::kError);
}

TEST(ReadPsFrame, FiltersKeepTheMatchingRows) {
  FakeSession f("h200x2");
  add_processes(f);
  EXPECT_EQ(read_ps_frame(f.session(), PsFilter{.pids = {4002}}).result.rows.size(), 1u);
  EXPECT_EQ(read_ps_frame(f.session(), PsFilter{.gpus = {"1"}}).result.rows.size(), 2u);
  PsFrame job = read_ps_frame(f.session(), PsFilter{.jobs = {"77"}});
  ASSERT_EQ(job.result.rows.size(), 1u);
  EXPECT_EQ(job.result.rows[0].pid, 4001u);
  PsFrame both = read_ps_frame(f.session(), PsFilter{.gpus = {"1"}, .pids = {4003}});
  EXPECT_TRUE(both.result.rows.empty()) << "a row must match every filter given";
  EXPECT_EQ(ps_worst(both.result), Severity::kInfo);
}

TEST(CheckPsFilter, AGpuThatIsNoneAndEmptyNamesAreRefused) {
  FakeSession f("h200x2");
  const Snapshot& s = f.session().snapshot();
  EXPECT_EQ(code_of([&] { check_ps_filter(s, PsFilter{.gpus = {"7"}}); }), kExitUsage);
  EXPECT_EQ(code_of([&] { check_ps_filter(s, PsFilter{.users = {""}}); }), kExitUsage);
  EXPECT_EQ(code_of([&] { check_ps_filter(s, PsFilter{.jobs = {""}}); }), kExitUsage);
  EXPECT_EQ(code_of([&] { check_ps_filter(s, PsFilter{.users = {"root"}, .gpus = {"0"}}); }), 0);
}

TEST(PsArguments, PidsAndFailOn) {
  EXPECT_EQ(parse_ps_pids({"1,2", "3"}), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(code_of([] { parse_ps_pids({"x"}); }), kExitUsage);
  EXPECT_EQ(parse_fail_on(std::nullopt), std::nullopt);
  EXPECT_EQ(parse_fail_on(std::string("warning")), std::optional<Severity>(Severity::kWarning));
  EXPECT_EQ(parse_fail_on(std::string("error")), std::optional<Severity>(Severity::kError));
  EXPECT_EQ(code_of([] { parse_fail_on(std::string("info")); }), kExitUsage);
}

}  // namespace
}  // namespace gpumap
