#include "output/query_csv.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "model/error.h"
#include "model/text.h"

namespace gpumap {
namespace {

constexpr const char* kNA = "[N/A]";

/// A value and its unit ("" for none): "12" and "MiB" print as "12 MiB", or "12" with nounits.
struct Cell {
  std::optional<std::string> value;
  const char* unit = "";
};

template <class T>
Cell num(const std::optional<T>& v, const char* unit = "") {
  return {v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt, unit};
}
Cell text(const std::optional<std::string>& v) { return {v, ""}; }
/// Watts as nvidia-smi writes them: two decimals ("70.86 W").
Cell watts(const std::optional<double>& v) {
  if (!v) return {std::nullopt, "W"};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
  return {std::string(buf), "W"};
}
Cell text(const std::string& v) { return {v.empty() ? std::nullopt : std::optional<std::string>(v), ""}; }

/// A part of a process's pod (its name, namespace, container, UID); null outside a pod or unnamed.
std::optional<std::string> pod_part(const ProcessRow& r, std::string PodRef::*part) {
  if (!r.pod || ((*r.pod).*part).empty()) return std::nullopt;
  return (*r.pod).*part;
}

std::string lease_text(const LeaseState* l) {
  if (!l) return kNA;
  std::string words = lease_summary(*l, LeaseWords::kShort);
  return words.empty() ? "none" : words;
}

struct GpuRow {
  const Snapshot& s;
  const Gpu& g;
  const GpuQueryExtras& x;
};
struct ProcRow {
  const Snapshot& s;
  const ProcessRow& r;
  const LeaseState* lease;
  const PsResult& ps;  // its GPU's findings (ProcessRow::gpu_findings)
};

template <class Row>
struct Field {
  const char* name;
  const char* unit;  // in the header ("MiB", "%"), "" for none
  std::vector<const char*> aliases;
  std::function<Cell(const Row&)> get;
};

const std::vector<Field<GpuRow>>& gpu_fields() {
  static const std::vector<Field<GpuRow>> f = {
      {"index", "", {}, [](const GpuRow& r) { return num(std::optional<uint32_t>(r.g.nvml_index)); }},
      {"uuid", "", {"gpu_uuid"}, [](const GpuRow& r) { return text(r.g.uuid); }},
      {"pci.bus_id", "", {"gpu_bus_id"}, [](const GpuRow& r) { return text(r.g.pci_bus_id); }},
      {"name", "", {"gpu_name"}, [](const GpuRow& r) { return text(r.g.name); }},
      {"minor_number", "", {}, [](const GpuRow& r) { return num(r.g.minor_number); }},
      {"memory.total", "MiB", {}, [](const GpuRow& r) { return num(r.g.memory_total_mib, "MiB"); }},
      {"memory.used", "MiB", {}, [](const GpuRow& r) { return num(r.g.memory_used_mib, "MiB"); }},
      {"memory.free", "MiB", {}, [](const GpuRow& r) { return num(r.g.memory_free_mib, "MiB"); }},
      {"utilization.gpu", "%", {}, [](const GpuRow& r) { return num(r.g.utilization_gpu, "%"); }},
      {"utilization.memory", "%", {}, [](const GpuRow& r) { return num(r.g.utilization_memory, "%"); }},
      {"temperature.gpu", "", {}, [](const GpuRow& r) { return num(r.g.temperature_c); }},  // nvidia-smi: no unit
      {"power.draw", "W", {}, [](const GpuRow& r) { return watts(r.g.power_draw_w); }},
      {"power.limit", "W", {}, [](const GpuRow& r) { return watts(r.g.power_limit_w); }},
      {"enforced.power.limit", "W", {}, [](const GpuRow& r) { return watts(r.g.enforced_power_limit_w); }},
      {"clocks.current.sm", "MHz", {"clocks.sm"}, [](const GpuRow& r) { return num(r.g.clock_sm_mhz, "MHz"); }},
      {"clocks.current.memory", "MHz", {"clocks.mem"}, [](const GpuRow& r) { return num(r.g.clock_memory_mhz, "MHz"); }},
      {"fan.speed", "%", {}, [](const GpuRow& r) { return num(r.g.fan_speed_percent, "%"); }},
      {"pstate", "", {},
       [](const GpuRow& r) {
         return text(r.g.performance_state ? std::optional<std::string>("P" + std::to_string(*r.g.performance_state))
                                           : std::nullopt);
       }},
      {"ecc.errors.corrected.volatile.total", "", {}, [](const GpuRow& r) { return num(r.g.ecc_corrected_volatile); }},
      {"ecc.errors.uncorrected.volatile.total", "", {}, [](const GpuRow& r) { return num(r.g.ecc_uncorrected_volatile); }},
      {"compute_cap", "", {}, [](const GpuRow& r) { return text(r.g.compute_capability); }},
      {"mig.mode.current", "", {},
       [](const GpuRow& r) {
         return text(r.g.mig_enabled ? std::optional<std::string>(*r.g.mig_enabled ? "Enabled" : "Disabled") : std::nullopt);
       }},
      {"driver_version", "", {}, [](const GpuRow& r) { return text(r.s.driver_version); }},
      {"count", "", {}, [](const GpuRow& r) { return num(std::optional<size_t>(r.s.gpus.size())); }},
      {"cuda_ordinal", "", {},
       [](const GpuRow& r) {
         auto it = r.x.cuda_ordinal.find(r.g.uuid);
         return num(it == r.x.cuda_ordinal.end() ? std::nullopt : std::optional<int>(it->second));
       }},
      {"lease", "", {},
       [](const GpuRow& r) {
         auto it = r.x.lease.find(r.g.uuid);
         return text(lease_text(it == r.x.lease.end() ? nullptr : &it->second));
       }},
      {"processes", "", {}, [](const GpuRow& r) {
         return num(r.g.processes ? std::optional<size_t>(r.g.processes->size()) : std::nullopt);
       }},
  };
  return f;
}

const std::vector<Field<ProcRow>>& process_fields() {
  static const std::vector<Field<ProcRow>> f = {
      {"pid", "", {}, [](const ProcRow& p) { return num(std::optional<uint32_t>(p.r.pid)); }},
      {"process_name", "", {"name"},
       [](const ProcRow& p) {
         if (!p.r.command) return text(std::nullopt);
         return text(p.r.command->substr(0, p.r.command->find(' ')));
       }},
      {"command", "", {}, [](const ProcRow& p) { return text(p.r.command); }},
      {"used_gpu_memory", "MiB", {"used_memory"}, [](const ProcRow& p) { return num(p.r.used_memory_mib, "MiB"); }},
      {"gpu_uuid", "", {"uuid"}, [](const ProcRow& p) { return text(p.r.uuid); }},
      {"gpu_index", "", {"index", "nvml_index"}, [](const ProcRow& p) { return num(std::optional<uint32_t>(p.r.nvml_index)); }},
      {"gpu_bus_id", "", {"pci.bus_id"},
       [](const ProcRow& p) {
         const Gpu* g = p.s.find_uuid(p.r.uuid);
         return text(g ? std::optional<std::string>(g->pci_bus_id) : std::nullopt);
       }},
      {"gpu_name", "", {},
       [](const ProcRow& p) {
         const Gpu* g = p.s.find_uuid(p.r.uuid);
         return text(g ? std::optional<std::string>(g->name) : std::nullopt);
       }},
      {"type", "", {}, [](const ProcRow& p) { return text(p.r.type); }},
      {"user", "", {}, [](const ProcRow& p) { return text(p.r.user); }},
      {"state", "", {}, [](const ProcRow& p) { return text(std::string(process_state_name(p.r.state))); }},
      {"cuda_ordinal", "", {}, [](const ProcRow& p) { return num(p.r.cuda_ordinal); }},
      {"cuda_visible_devices", "", {}, [](const ProcRow& p) { return text(p.r.cuda_visible_devices); }},
      {"slurm_job_id", "", {}, [](const ProcRow& p) { return text(p.r.slurm_job_id); }},
      {"utilization.sm", "%", {"sm_utilization"}, [](const ProcRow& p) { return num(p.r.sm_utilization, "%"); }},
      {"utilization.memory", "%", {"memory_utilization"},
       [](const ProcRow& p) { return num(p.r.memory_utilization, "%"); }},
      {"rank", "", {"global_rank"}, [](const ProcRow& p) { return text(p.r.global_rank); }},
      {"slurm_procid", "", {}, [](const ProcRow& p) { return text(p.r.slurm_procid); }},
      {"local_rank", "", {}, [](const ProcRow& p) { return num(p.r.rank); }},
      {"lease", "", {}, [](const ProcRow& p) { return text(lease_text(p.lease)); }},
      {"pod", "", {}, [](const ProcRow& p) { return text(pod_part(p.r, &PodRef::name)); }},
      {"namespace", "", {}, [](const ProcRow& p) { return text(pod_part(p.r, &PodRef::ns)); }},
      {"container", "", {}, [](const ProcRow& p) { return text(pod_part(p.r, &PodRef::container)); }},
      {"pod_uid", "", {}, [](const ProcRow& p) { return text(pod_part(p.r, &PodRef::uid)); }},
      {"findings", "", {},
       [](const ProcRow& p) {
         std::string ids;
         for (const Finding& fd : p.r.findings) ids += (ids.empty() ? "" : " ") + fd.id;
         for (size_t g : p.r.gpu_findings) ids += (ids.empty() ? "" : " ") + p.ps.gpu_findings[g].finding.id;
         return text(ids);
       }},
  };
  return f;
}

template <class Row>
const Field<Row>* find_field(const std::vector<Field<Row>>& fields, const std::string& name) {
  for (const Field<Row>& f : fields) {
    if (name == f.name) return &f;
    for (const char* a : f.aliases)
      if (name == a) return &f;
  }
  return nullptr;
}

template <class Row>
std::vector<std::string> names_of(const std::vector<Field<Row>>& fields) {
  std::vector<std::string> out;
  for (const Field<Row>& f : fields) {
    out.push_back(f.name);
    for (const char* a : f.aliases) out.push_back(a);
  }
  return out;
}

template <class Row>
std::string header_line(const std::vector<Field<Row>>& known, const std::vector<std::string>& fields, CsvFormat fmt) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field<Row>* f = find_field(known, fields[i]);
    out += (i ? ", " : "") + fields[i];
    if (fmt.units && *f->unit) out += std::string(" [") + f->unit + "]";
  }
  return out + "\n";
}

/// A value as RFC 4180 writes a field: in double quotes, its quotes doubled, when it holds a
/// comma, a quote or a line break (a command line, a CUDA_VISIBLE_DEVICES list); else as it is,
/// as nvidia-smi writes its plain values.
std::string csv_quoted(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

template <class Row>
std::string value_line(const std::vector<Field<Row>>& known, const std::vector<std::string>& fields, CsvFormat fmt,
                       const Row& row) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    Cell c = find_field(known, fields[i])->get(row);
    out += i ? ", " : "";
    if (!c.value) out += kNA;
    else out += csv_quoted(printable(*c.value) + (fmt.units && *c.unit ? std::string(" ") + c.unit : ""));
  }
  return out + "\n";
}

}  // namespace

CsvFormat parse_csv_format(const std::string& text) {
  CsvFormat f;
  bool csv = false;
  for (const std::string& piece : split(text, ',')) {
    std::string p = trim(piece);
    if (p == "csv") csv = true;
    else if (p == "noheader") f.header = false;
    else if (p == "nounits") f.units = false;
    else
      throw Error(kExitUsage, "--format `" + text + "`: `" + p + "` is not csv, noheader or nounits",
                  "use --format=csv, --format=csv,noheader or --format=csv,noheader,nounits (as nvidia-smi)");
  }
  if (!csv) throw Error(kExitUsage, "--format `" + text + "` lacks csv", "use --format=csv[,noheader][,nounits]");
  return f;
}

std::vector<std::string> query_field_names(QueryKind kind) {
  return kind == QueryKind::kGpu ? names_of(gpu_fields()) : names_of(process_fields());
}

std::vector<std::string> parse_query_fields(QueryKind kind, const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  for (const std::string& piece : split(text, ',')) {
    std::string name = trim(piece);
    const char* canonical = nullptr;
    if (kind == QueryKind::kGpu) {
      if (auto* f = find_field(gpu_fields(), name)) canonical = f->name;
    } else if (auto* f = find_field(process_fields(), name)) {
      canonical = f->name;
    }
    if (!canonical)
      throw Error(kExitUsage, option + ": `" + name + "` is not a field gpumap knows" + did_you_mean(name, query_field_names(kind)),
                  "fields: " + join(query_field_names(kind), ","));
    out.push_back(canonical);  // the header says the canonical name, as nvidia-smi's does
  }
  return out;
}

std::string render_gpu_csv(const Snapshot& s, const GpuQueryExtras& x, const std::vector<std::string>& fields,
                           CsvFormat fmt) {
  std::string out = fmt.header ? header_line(gpu_fields(), fields, fmt) : "";
  for (const Gpu& g : s.gpus) out += value_line(gpu_fields(), fields, fmt, GpuRow{s, g, x});
  return out;
}

std::string render_process_csv(const Snapshot& s, const PsResult& ps,
                               const std::map<std::string, std::optional<LeaseState>>& leases,
                               const std::vector<std::string>& fields, CsvFormat fmt) {
  std::string out = fmt.header ? header_line(process_fields(), fields, fmt) : "";
  for (const ProcessRow& r : ps.rows) {
    auto it = leases.find(r.uuid);
    const LeaseState* l = it != leases.end() && it->second ? &*it->second : nullptr;
    out += value_line(process_fields(), fields, fmt, ProcRow{s, r, l, ps});
  }
  return out;
}

bool gpu_query_reads_sensors(const std::vector<std::string>& fields) {
  return std::any_of(fields.begin(), fields.end(), [](const std::string& f) {
    return f.rfind("temperature.", 0) == 0 || f.find("power.") != std::string::npos || f.rfind("clocks.", 0) == 0 ||
           f == "fan.speed" || f == "pstate" || f.rfind("ecc.", 0) == 0;
  });
}

}  // namespace gpumap
