// `gpumap map`'s answer (answer/map_answer.h) as JSON (the contract of docs/cli.md), as the table
// people read, and as the one line for logs; and map --batch's line per case.
#pragma once
#include <ostream>
#include <string>

#include "answer/map_answer.h"
#include "formats/json.h"
#include "model/snapshot.h"
#include "output/style.h"

namespace gpumap {

/// snapshot_json plus cuda, asked_cuda (when asked), not_visible, torch, environment, findings
/// and check (with --check).
Json map_json(const Snapshot& s, const MapAnswer& a);
/// The banner, the asked cuda:N, the CUDA view table (or why CUDA would fail), the GPUs not
/// visible, the variables in force, the findings and the check's verdict.
std::string map_text(const Snapshot& s, const MapAnswer& a, const TermStyle& st = term_style());
/// One printable line for logs (the Slurm TaskProlog prints it per task): "gpumap: rank 1 on
/// node7: cuda:0 = nvidia-smi 2 GPU-...; 1 finding(s): order-differs (run gpumap doctor)".
std::string map_line(const Snapshot& s, const MapAnswer& a);

/// How `gpumap map` prints its answer: the table (the default), the JSON document, or --line.
enum class MapFormat { kText, kJson, kLine };
/// The whole output of `gpumap map` in `format`: map_text, map_json, or map_line and a newline.
std::string render_map(const Snapshot& s, const MapAnswer& a, MapFormat format, const TermStyle& st = term_style());

/// " cuda:0 = nvidia-smi 1 GPU-..., cuda:1 = ..." for a mapping; " CUDA would fail (NAME)" or
/// " no GPU" instead when there is none.
std::string cuda_assignments(const Snapshot& s, const Mapping& m);

/// map --batch: one case's document (document(), line, environment, cuda, torch) and its text
/// line ("line 3: cuda:0 = nvidia-smi 1 GPU-...").
Json batch_case_json(const Snapshot& s, size_t line, const Environment& env, const Mapping& m);
std::string batch_case_line(const Snapshot& s, size_t line, const Mapping& m);

/// map --batch's whole output: each case of `a` as it is predicted, one line each (batch_case_line,
/// or with `json` batch_case_json on one line), written to `out` before the next is asked for;
/// flushed at the end.
void write_map_batch(std::ostream& out, const Snapshot& s, MapBatchAnswer& a, bool json);

}  // namespace gpumap
