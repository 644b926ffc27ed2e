// The rules of `gpumap job`: from one job's joined report (resolve/job_view.h: each node's
// processes and GPUs, and Slurm's allocation) to its findings.  Pure: no I/O.  Every rule id is
// documented in docs/findings.md and tested in job_rules_test.cc.
#pragma once
#include <vector>

#include "findings/severity.h"
#include "resolve/job_view.h"

namespace gpumap {

/// Per GPU (node + UUID), in the report's GPU order: two ranks on one GPU, a rank on a GPU
/// outside the allocation, an allocated GPU nobody uses (the last two only when the allocation
/// is known); then, once per process of the job, a rank not on its cuda:{local rank}
/// (rank-on-wrong-gpu) or holding memory on another GPU besides its own (stray-context).
std::vector<Finding> job_findings(const JobReport& r);

}  // namespace gpumap
