// gpumap ps's process row in JSON, built here like every other JSON view.
#pragma once
#include <optional>
#include <string>

#include "os/lease.h"
#include "output/json_view.h"
#include "resolve/process_view.h"

namespace gpumap {

/// One process row as a JSON object on one line, no newline: pid, local_pid, nspid, state,
/// nvml_index, uuid, type, used_memory_mib, user, uid, command, environ, the variables it
/// started with, cuda_ordinal, cuda_error, lease (the lease object plus this_process), findings
/// and gpu_findings (positions in the document's findings).
std::string ps_row_json(const ProcessRow& r, const std::optional<LeaseState>& lease);

/// The document's findings: one per GPU trap (PsResult::gpu_findings), each a finding with
/// nvml_index, uuid and the pids it concerns.
Json ps_gpu_findings_json(const std::vector<GpuFinding>& fs);

}  // namespace gpumap
