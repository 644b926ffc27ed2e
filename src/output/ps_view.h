// gpumap ps's frame (answer/ps_answer.h) as a JSON document and as a table, and its process
// rows in JSON, built here like every other JSON view.
#pragma once
#include <optional>
#include <string>

#include "answer/ps_answer.h"
#include "model/lease.h"
#include "output/json_view.h"
#include "output/style.h"
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

/// The whole frame as one JSON document: the host document, proc_root, pid_namespace,
/// unlisted_gpus, host, slurm_node, gpus, then `processes` (one row per line, or everything on
/// one line when `one_line`: --watch's one document per line) and `findings`.  Rows are written
/// one at a time: 10 000 processes never build one big tree.
std::string ps_frame_json(const Snapshot& s, const PsFrame& frame, bool one_line);

/// What the text shows besides the table.
struct PsTextOptions {
  bool all_findings = false;  // --all: info findings too (else a line counts those hidden)
  bool explain_one = false;   // --pid N: when the rows are one process, it in detail (its variables,
                              // its cuda:N map, all its findings with fixes) instead of the findings list
};

/// The frame as people read it: the host banner, the process table (narrowed to the terminal),
/// the GPUs whose processes NVML could not list, and the findings (each GPU trap once).  Findings
/// of the same rule whose messages differ only in numbers are folded into one, once per job
/// (a launcher's job, else a Slurm job) or, for processes outside a job, once per GPU, naming
/// their pids; info findings are counted, not shown, unless `opts.all_findings`.
std::string ps_frame_text(const Snapshot& s, const PsFrame& frame, const TermStyle& st = term_style(),
                          const PsTextOptions& opts = {});

/// The frame in the form asked: its JSON document (one line when `one_line`: a --watch frame) or
/// the table with `opts`.
std::string render_ps_frame(const Snapshot& s, const PsFrame& frame, bool json, bool one_line,
                            const PsTextOptions& opts);

}  // namespace gpumap
