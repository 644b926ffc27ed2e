// nvidia-smi-style queries for scripts: `gpumap list --query-gpu=FIELDS --format=csv[,noheader][,nounits]`
// and `gpumap ps --query=FIELDS --format=csv`.  nvidia-smi's field names and its CSV (", "
// between values, "memory.used [MiB]" headers, "12 MiB" values, "[N/A]" for what is not known),
// plus gpumap's own fields (cuda_ordinal, lease, ...).  docs/cli.md lists the fields.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "model/lease.h"
#include "resolve/process_view.h"

namespace gpumap {

struct CsvFormat {
  bool header = true;
  bool units = true;
};

/// --format's value: "csv" with ",noheader" and/or ",nounits"; Error(kExitUsage) naming it otherwise.
CsvFormat parse_csv_format(const std::string& text);

enum class QueryKind { kGpu, kProcess };
/// The fields of a --query-gpu (kGpu) or ps --query (kProcess) list, comma separated (spaces
/// allowed), as their canonical names; Error(kExitUsage) naming an unknown one and listing the known.
std::vector<std::string> parse_query_fields(QueryKind kind, const std::string& text, const std::string& option);
/// Every field name of `kind` (aliases included), for help and errors.
std::vector<std::string> query_field_names(QueryKind kind);
/// Whether `--query-gpu` fields need the sensors read (temperature, power, clocks, fan, pstate,
/// ECC: 4 ms of a 31 ms `list` on an H100, so they are read only when asked).
bool gpu_query_reads_sensors(const std::vector<std::string>& fields);

/// What a GPU row needs beyond the snapshot: each GPU's cuda:N in the environment asked about
/// (absent: CUDA cannot see it there), and its lease (absent: unknown).
struct GpuQueryExtras {
  std::map<std::string, int> cuda_ordinal;  // by UUID
  std::map<std::string, LeaseState> lease;  // by UUID
};
std::string render_gpu_csv(const Snapshot& s, const GpuQueryExtras& x, const std::vector<std::string>& fields,
                           CsvFormat fmt);

/// One line per ps row.
std::string render_process_csv(const Snapshot& s, const PsResult& ps,
                               const std::map<std::string, std::optional<LeaseState>>& leases,
                               const std::vector<std::string>& fields, CsvFormat fmt);

}  // namespace gpumap
