// `gpumap list`'s answer (answer/list_answer.h) as a table, as JSON and as nvidia-smi's CSV.
#pragma once
#include <string>
#include <vector>

#include "answer/list_answer.h"
#include "formats/json.h"
#include "output/query_csv.h"
#include "output/style.h"

namespace gpumap {

/// The snapshot document; each GPU with its `lease` (null for a GPU NVML could not name) and
/// its outer number under its key (host_index, slurm_id).
Json list_json(const ListAnswer& a);

/// The host banner, one row per GPU (an outer-number column inside a container or a Slurm step),
/// then each GPU's notes (queries that failed).
std::string list_text(const ListAnswer& a, const TermStyle& st = term_style());

/// --query-gpu FIELDS --format csv: nvidia-smi's CSV, plus gpumap's cuda_ordinal and lease.
std::string list_csv(const ListAnswer& a, const std::vector<std::string>& fields, CsvFormat fmt);

/// The answer in the form asked: the JSON document (--json) or the table (CSV: list_csv).
std::string render_list(const ListAnswer& a, bool json);

}  // namespace gpumap
