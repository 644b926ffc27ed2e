// `gpumap job`'s document and table: one Slurm job's GPU processes across its nodes
// (resolve/job_view.h's JobReport).
#pragma once
#include <map>
#include <string>

#include "output/json_view.h"
#include "output/style.h"
#include "resolve/job_view.h"

namespace gpumap {

/// {job_id, nodes, allocation_known, processes, gpus, other_processes, node_errors,
/// missing_nodes, findings} (docs/cli.md).  A GPU is {"node"} + gpu_ref_json + {"allocated"}.
Json job_report_json(const JobReport& r);

/// The summary line, the process table, srun's node errors, one line per node that gave no
/// report (`missing_why`: node -> why), and the findings.
std::string render_job_report(const JobReport& r, const std::map<std::string, std::string>& missing_why,
                              const TermStyle& st = term_style());

/// The report in the form asked: the JSON document (--json) or render_job_report's text.
std::string render_job(const JobReport& r, const std::map<std::string, std::string>& missing_why, bool json);

}  // namespace gpumap
