// The Prometheus text format 0.0.4 and gpumap's series (docs/metrics.md).  Value series carry
// only the keys to join on (uuid; pid, type, uuid); the `_info` series carry the identity labels.
#include "output/metrics_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "findings/severity.h"
#include "model/text.h"

namespace gpumap {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string number(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

template <class T>
std::string opt_text(const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_same_v<T, std::string>) return *v;
  else return std::to_string(*v);
}

/// A label value from outside (driver strings, /proc, lease records): printable, valid UTF-8.
std::string clean(std::string_view v) { return printable(v); }

}  // namespace

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view raw) {
  // HELP lines and `# gpumap:` comments carry driver errors: a line break is written `\n`, and
  // what is between them is made printable, valid UTF-8 (a raw 0xFF byte or an escape code from
  // a driver's message never reaches the scraper or a terminal showing the page).
  std::string out;
  size_t start = 0;
  for (;;) {
    size_t nl = raw.find('\n', start);
    for (char c : printable(raw.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start))) {
      if (c == '\\') out += "\\\\";
      else out += c;
    }
    if (nl == std::string_view::npos) break;
    out += "\\n";
    start = nl + 1;
  }
  return out;
}

std::string short_command(std::string_view command, size_t max_bytes) {
  std::string p = printable(command);
  if (p.size() <= max_bytes) return p;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(p[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return p.substr(0, cut) + "\u2026";
}

void Exposition::family(const char* name, const char* type, const std::string& help) {
  name_ = name;
  // HELP and TYPE are written with the first sample: a family with none is left out.
  pending_ = "# HELP " + name_ + " " + escape_help(help) + "\n# TYPE " + name_ + " " + type + "\n";
}

void Exposition::sample(const MetricLabels& labels, double value) {
  if (!std::isfinite(value)) return;
  if (!pending_.empty()) {
    out_ += pending_;
    pending_.clear();
  }
  out_ += name_;
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (v.empty()) continue;
    out_ += first ? '{' : ',';
    first = false;
    out_ += k;
    out_ += "=\"";
    out_ += escape_label_value(v.size() > kMaxLabelValueBytes ? short_command(v, kMaxLabelValueBytes) : v);
    out_ += '"';
  }
  if (!first) out_ += '}';
  out_ += ' ';
  out_ += number(value);
  out_ += '\n';
}

namespace {

constexpr const char* kGauge = "gauge";
constexpr const char* kCounter = "counter";

// What a family's series are read from: one subject per series (a GPU, a MIG device, a process
// row, the exporter's health), with what the frame knows about it.
struct GpuSubject {
  const Gpu* gpu;
  const LeaseState* lease;  // null: unknown (or no UUID to look it up by)
};
struct MigSubject {
  const Gpu* gpu;
  const MigDevice* device;
};
struct ProcessSubject {
  const ProcessRow* row;
  const LeaseState* lease;  // its GPU's
  const SeriesBudget* budget;
};

/// One metric family: a row of a table below.  Its series are written in the order of the
/// subjects, one per subject whose value and labels are both known (the labels are read only
/// for a subject with a value).
template <class Subject>
struct Family {
  const char* name;
  const char* type;  // kGauge or kCounter
  const char* help;
  /// The series' labels; nullopt: the subject has no series in this family (no key to join on).
  std::optional<MetricLabels> (*labels)(const Subject&);
  /// Its value; nullopt: no sample (the driver does not say, or the family does not apply).
  std::optional<double> (*value)(const Subject&);
};

template <class Subject, size_t N>
void write_families(Exposition& out, const Family<Subject> (&families)[N], const std::vector<Subject>& subjects) {
  for (const Family<Subject>& f : families) {
    out.family(f.name, f.type, f.help);
    for (const Subject& s : subjects) {
      std::optional<double> v = f.value(s);
      if (!v) continue;
      if (std::optional<MetricLabels> l = f.labels(s)) out.sample(*l, *v);
    }
  }
}

template <class Subject>
std::optional<double> one(const Subject&) {
  return 1.0;
}
template <class Subject>
std::optional<MetricLabels> no_labels(const Subject&) {
  return MetricLabels{};
}
/// A driver's number times `scale`; none when the driver does not say.
template <class T>
std::optional<double> scaled(const std::optional<T>& v, double scale) {
  return v ? std::optional<double>(static_cast<double>(*v) * scale) : std::nullopt;
}
/// A percentage as a ratio (nvidia-smi's utilization.gpu / 100).
template <class T>
std::optional<double> ratio(const std::optional<T>& v) {
  return v ? std::optional<double>(*v / 100.0) : std::nullopt;
}

// --- the host ---

struct HostSubject {
  const Snapshot* snapshot;
  const std::string* host;
};

std::optional<MetricLabels> driver_labels(const HostSubject& h) {
  const Snapshot* s = h.snapshot;
  return MetricLabels{{"driver_version", clean(opt_text(s->driver_version))},
                      {"cuda_driver_version", opt_text(s->cuda_driver_version)},
                      {"source", clean(s->source)},
                      {"simulated", s->simulated ? "true" : "false"}};
}

// The host's name on one series of its own, not on every series (docs/metrics.md, "The host's
// name"): join it with `* on(instance) group_left(hostname) gpumap_host_info`.
const Family<HostSubject> kHostFamilies[] = {
    {"gpumap_driver_info", kGauge, "The driver gpumap read: versions and source (NVML or a simulated host)", driver_labels, one},
    {"gpumap_host_info", kGauge, "The host's name (as gpumap ps says it), value 1: join on instance to name a target's node",
     [](const HostSubject& h) -> std::optional<MetricLabels> { return MetricLabels{{"hostname", clean(*h.host)}}; },
     [](const HostSubject& h) { return h.host->empty() ? std::nullopt : std::optional<double>(1); }},
};

// --- GPUs: gpumap_gpu_info carries the identities, the value series only the UUID ---

std::optional<MetricLabels> gpu_identity(const GpuSubject& s) {
  const Gpu& g = *s.gpu;
  return MetricLabels{{"uuid", clean(g.uuid)},
                      {"nvml_index", std::to_string(g.nvml_index)},
                      {"minor_number", opt_text(g.minor_number)},
                      {"pci_bus_id", clean(g.pci_bus_id)},
                      {"name", clean(g.name)},
                      {"mig", g.mig_enabled ? (*g.mig_enabled ? "enabled" : "disabled") : ""}};
}
/// Value series are keyed on the UUID: a GPU whose UUID NVML could not read has none.
std::optional<MetricLabels> gpu_key(const GpuSubject& s) {
  if (s.gpu->uuid.empty()) return std::nullopt;
  return MetricLabels{{"uuid", clean(s.gpu->uuid)}};
}
std::optional<MetricLabels> lease_holder(const GpuSubject& s) {
  const std::optional<LeaseRecord>& h = s.lease->holder;
  return MetricLabels{{"uuid", clean(s.gpu->uuid)}, {"pid", h ? std::to_string(h->pid) : ""}, {"user", h ? clean(h->user) : ""}};
}

// What a monitor shows (nvidia-smi's names in the help; no sample where the driver does not support it).
const Family<GpuSubject> kGpuFamilies[] = {
    {"gpumap_gpu_info", kGauge, "One per GPU, value 1: its identities (nvml_index is the nvidia-smi index; uuid the join key)",
     gpu_identity, one},
    {"gpumap_gpu_memory_total_bytes", kGauge, "GPU memory in total", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->memory_total_mib, kMiB); }},
    {"gpumap_gpu_memory_used_bytes", kGauge, "GPU memory in use", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->memory_used_mib, kMiB); }},
    {"gpumap_gpu_utilization_ratio", kGauge, "Share of the last sample period a kernel ran (nvidia-smi utilization.gpu / 100)",
     gpu_key, [](const GpuSubject& s) { return ratio(s.gpu->utilization_gpu); }},
    {"gpumap_gpu_memory_utilization_ratio", kGauge,
     "Share of the last sample period memory was read or written (utilization.memory / 100)", gpu_key,
     [](const GpuSubject& s) { return ratio(s.gpu->utilization_memory); }},
    {"gpumap_gpu_temperature_celsius", kGauge, "GPU core temperature (nvidia-smi temperature.gpu)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->temperature_c, 1); }},
    {"gpumap_gpu_power_watts", kGauge, "Board power draw (nvidia-smi power.draw)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->power_draw_w, 1); }},
    {"gpumap_gpu_power_limit_watts", kGauge, "Power management limit (nvidia-smi power.limit)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->power_limit_w, 1); }},
    {"gpumap_gpu_enforced_power_limit_watts", kGauge, "The power limit in force (nvidia-smi enforced.power.limit)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->enforced_power_limit_w, 1); }},
    {"gpumap_gpu_sm_clock_hertz", kGauge, "SM clock (nvidia-smi clocks.current.sm, in Hz)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->clock_sm_mhz, 1e6); }},
    {"gpumap_gpu_memory_clock_hertz", kGauge, "Memory clock (nvidia-smi clocks.current.memory, in Hz)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->clock_memory_mhz, 1e6); }},
    {"gpumap_gpu_fan_speed_ratio", kGauge, "Fan speed as a share of its maximum (nvidia-smi fan.speed / 100)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->fan_speed_percent, 0.01); }},
    {"gpumap_gpu_performance_state", kGauge,
     "Performance state: 0 for P0 (most performance) to 15 for P15 (nvidia-smi pstate)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->performance_state, 1); }},
    {"gpumap_gpu_ecc_corrected_volatile_errors", kGauge,
     "Corrected ECC errors since the driver loaded (nvidia-smi ecc.errors.corrected.volatile.total)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->ecc_corrected_volatile, 1); }},
    {"gpumap_gpu_ecc_uncorrected_volatile_errors", kGauge,
     "Uncorrected ECC errors since the driver loaded (nvidia-smi ecc.errors.uncorrected.volatile.total)", gpu_key,
     [](const GpuSubject& s) { return scaled(s.gpu->ecc_uncorrected_volatile, 1); }},
    {"gpumap_gpu_processes", kGauge,
     "Processes in NVML's compute and graphics lists of the GPU (none when the lists could not be read)", gpu_key,
     [](const GpuSubject& s) {
       return s.gpu->processes ? std::optional<double>(s.gpu->processes->size()) : std::nullopt;
     }},
    {"gpumap_gpu_leased", kGauge, "1 when a gpumap lease (gpumap run/pick --lease) is held on the GPU, else 0", gpu_key,
     [](const GpuSubject& s) { return s.lease ? std::optional<double>(s.lease->held ? 1 : 0) : std::nullopt; }},
    {"gpumap_gpu_lease_info", kGauge, "One per leased GPU, value 1: who holds the lease", lease_holder,
     [](const GpuSubject& s) { return s.lease && s.lease->held ? std::optional<double>(1) : std::nullopt; }},
};

// --- MIG devices ---

std::optional<MetricLabels> mig_identity(const MigSubject& s) {
  const MigDevice& d = *s.device;
  return MetricLabels{{"uuid", clean(d.uuid)},
                      {"parent_uuid", clean(s.gpu->uuid)},
                      {"nvml_index", std::to_string(s.gpu->nvml_index)},
                      {"gpu_instance_id", opt_text(d.gpu_instance_id)},
                      {"compute_instance_id", opt_text(d.compute_instance_id)},
                      {"name", clean(d.name)}};
}
std::optional<MetricLabels> mig_key(const MigSubject& s) { return MetricLabels{{"uuid", clean(s.device->uuid)}}; }

const Family<MigSubject> kMigFamilies[] = {
    {"gpumap_mig_device_info", kGauge, "One per MIG device, value 1: its identities and its GPU", mig_identity, one},
    {"gpumap_mig_device_memory_total_bytes", kGauge, "A MIG device's own memory in total", mig_key,
     [](const MigSubject& s) { return scaled(s.device->memory_total_mib, kMiB); }},
    {"gpumap_mig_device_memory_used_bytes", kGauge, "A MIG device's own memory in use", mig_key,
     [](const MigSubject& s) { return scaled(s.device->memory_used_mib, kMiB); }},
};

// --- processes: gpumap_process_info carries the identities, the value series (pid, type, uuid) ---

/// A label of gpumap_process_info: its name, whether it is a join key (on every process series,
/// never dropped) and how it is read from the process's row.
struct ProcessLabel {
  const char* name;
  bool join_key;
  std::string (*value)(const ProcessSubject&);
};

std::string lease_label(const ProcessSubject& s) {
  const LeaseState* l = s.lease;
  if (!l || !l->held) return "";
  const ProcessRow& r = *s.row;
  return l->holder && r.local_pid && l->holder->pid == static_cast<int64_t>(*r.local_pid) ? "this-process" : "other";
}

const ProcessLabel kProcessInfoLabels[] = {
    {"pid", true, [](const ProcessSubject& s) { return std::to_string(s.row->pid); }},
    {"type", true, [](const ProcessSubject& s) { return s.row->type; }},
    {"uuid", true, [](const ProcessSubject& s) { return clean(s.row->uuid); }},
    {"nvml_index", false, [](const ProcessSubject& s) { return std::to_string(s.row->nvml_index); }},
    // "none" where its CUDA's view is known and leaves this GPU out (top's and fleet's word), absent
    // where it is unknown (issue 53: the two were one).
    {"cuda_ordinal", false,
     [](const ProcessSubject& s) {
       const ProcessRow& r = *s.row;
       if (r.cuda_ordinal) return std::to_string(*r.cuda_ordinal);
       bool none = r.view && !r.cuda_error && r.state == ProcessState::kRunning;
       return std::string(none ? "none" : "");
     }},
    {"state", false, [](const ProcessSubject& s) { return std::string(process_state_name(s.row->state)); }},
    {"user", false, [](const ProcessSubject& s) { return clean(opt_text(s.row->user)); }},
    {"command", false,
     [](const ProcessSubject& s) {
       size_t bytes = s.budget->command_bytes;
       return s.row->command && bytes > 0 ? short_command(*s.row->command, bytes) : "";
     }},
    {"slurm_job_id", false, [](const ProcessSubject& s) { return clean(opt_text(s.row->slurm_job_id)); }},
    {"rank", false, [](const ProcessSubject& s) { return clean(opt_text(s.row->global_rank)); }},
    {"local_rank", false, [](const ProcessSubject& s) { return opt_text(s.row->rank); }},
    {"lease", false, lease_label},
    // dcgm-exporter's label names, so dashboards join (empty outside a pod, or unnamed)
    {"pod", false, [](const ProcessSubject& s) { return s.row->pod ? clean(s.row->pod->name) : ""; }},
    {"namespace", false, [](const ProcessSubject& s) { return s.row->pod ? clean(s.row->pod->ns) : ""; }},
    {"container", false, [](const ProcessSubject& s) { return s.row->pod ? clean(s.row->pod->container) : ""; }},
    // The job as its innermost launcher names it, `ps`'s grouping: "torchrun <TORCHELASTIC_RUN_ID>",
    // "slurm <job>.<step>", "master <MASTER_ADDR>:<MASTER_PORT>" (MPI under either); absent when none.
    {"launcher_job", false, [](const ProcessSubject& s) { return clean(s.row->job); }},
};

std::optional<MetricLabels> process_identity(const ProcessSubject& s) {
  const std::vector<std::string>& dropped = s.budget->dropped_labels;
  MetricLabels labels;
  for (const ProcessLabel& l : kProcessInfoLabels)
    if (l.join_key || std::find(dropped.begin(), dropped.end(), l.name) == dropped.end()) labels.emplace_back(l.name, l.value(s));
  return labels;
}
std::optional<MetricLabels> process_key(const ProcessSubject& s) {
  return MetricLabels{{"pid", std::to_string(s.row->pid)}, {"type", s.row->type}, {"uuid", clean(s.row->uuid)}};
}

// --process-series info keeps this one; none drops it too.
const Family<ProcessSubject> kProcessInfoFamilies[] = {
    {"gpumap_process_info", kGauge,
     "One per process on a GPU, value 1: cuda_ordinal is the cuda:N that process calls this GPU "
     "(its own CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER; absent when it cannot see it or its "
     "environment is unknown)",
     process_identity, one},
};
// --process-series all.
const Family<ProcessSubject> kProcessValueFamilies[] = {
    {"gpumap_process_used_memory_bytes", kGauge, "GPU memory a process uses on the GPU (none when the driver does not say)",
     process_key, [](const ProcessSubject& s) { return scaled(s.row->used_memory_mib, kMiB); }},
    {"gpumap_process_sm_utilization_ratio", kGauge,
     "Share of the last sample period the process's kernels ran on the GPU (NVML's per-process SM "
     "utilisation / 100; none when the driver does not support it)",
     process_key, [](const ProcessSubject& s) { return ratio(s.row->sm_utilization); }},
    {"gpumap_process_memory_utilization_ratio", kGauge,
     "Share of the last sample period the process read or wrote GPU memory (NVML's per-process memory "
     "utilisation / 100)",
     process_key, [](const ProcessSubject& s) { return ratio(s.row->memory_utilization); }},
};

// --- findings: the host's, then each process's (with pid and uuid), one series per (id, pid, uuid) ---

constexpr const char* kFindingFamily = "gpumap_finding";
constexpr const char* kFindingHelp =
    "One per finding, value 1 (docs/findings.md): with pid and uuid for a process's (gpumap ps), "
    "without for the host's (gpumap doctor for a process with no CUDA variables)";

/// A process row's findings: its own, and its GPU's (once per GPU in ps: one sample per pid here).
std::vector<const Finding*> findings_of(const ProcessRow& r, const PsResult& ps) {
  std::vector<const Finding*> fs;
  for (const Finding& f : r.findings) fs.push_back(&f);
  for (size_t g : r.gpu_findings) fs.push_back(&ps.gpu_findings[g].finding);
  return fs;
}

void add_findings(Exposition& out, const MetricsInput& in, const std::vector<ProcessSubject>& processes, Severity min) {
  out.family(kFindingFamily, kGauge, kFindingHelp);
  std::set<std::string> said;
  for (const Finding& f : in.host_findings)
    if (f.severity >= min && said.insert(f.id).second) out.sample({{"id", f.id}, {"severity", severity_name(f.severity)}}, 1);
  for (const ProcessSubject& p : processes) {
    const ProcessRow& r = *p.row;
    for (const Finding* f : findings_of(r, in.ps))
      if (f->severity >= min && said.insert(f->id + " " + std::to_string(r.pid) + " " + r.uuid).second)
        out.sample({{"id", f->id}, {"severity", severity_name(f->severity)}, {"pid", std::to_string(r.pid)},
                    {"uuid", clean(r.uuid)}},
                   1);
  }
}

// --- the exporter's own health ---

std::optional<double> flag(bool b) { return b ? 1.0 : 0.0; }

const Family<ExporterHealth> kHealthFamilies[] = {
    {"gpumap_exporter_up", kGauge, "1 when the last driver read succeeded, 0 when it failed or did not answer in time",
     no_labels, [](const ExporterHealth& h) { return flag(h.up); }},
    {"gpumap_exporter_cuda_up", kGauge,
     "1 when the series served know CUDA's view (cuda_ordinal, findings), 0 when the CUDA probe failed or "
     "did not answer in time: NVML's GPUs and processes are still served, without them",
     no_labels, [](const ExporterHealth& h) { return h.cuda_up ? flag(*h.cuda_up) : std::nullopt; }},
    {"gpumap_exporter_stale", kGauge,
     "1 when the series served come from an older read than the last attempt (the driver failed or hangs)", no_labels,
     [](const ExporterHealth& h) { return flag(h.stale); }},
    {"gpumap_exporter_read_duration_seconds", kGauge, "How long reading the driver and /proc took for the series served",
     no_labels, [](const ExporterHealth& h) { return h.read_seconds; }},
    {"gpumap_exporter_last_success_timestamp_seconds", kGauge, "When the last good driver read ended (Unix time)", no_labels,
     [](const ExporterHealth& h) { return h.last_success_unix; }},
    {"gpumap_exporter_driver_errors_total", kCounter, "Driver reads that failed or did not answer in time", no_labels,
     [](const ExporterHealth& h) { return std::optional<double>(static_cast<double>(h.driver_errors)); }},
    {"gpumap_exporter_scrapes_total", kCounter, "/metrics requests answered (gpumap serve)", no_labels,
     [](const ExporterHealth& h) { return scaled(h.scrapes, 1); }},
    {"gpumap_exporter_capped_processes", kGauge,
     "Processes on a GPU the series served leave out under --max-processes (those with no warning or error "
     "finding and the least GPU memory)",
     no_labels, [](const ExporterHealth& h) { return scaled(h.capped_processes, 1); }},
    {"gpumap_exporter_dropped_processes_total", kCounter,
     "Processes left out under --max-processes, summed over the frames read (gpumap serve)", no_labels,
     [](const ExporterHealth& h) { return scaled(h.dropped_processes_total, 1); }},
    {"gpumap_build_info", kGauge, "gpumap's version, value 1",
     [](const ExporterHealth& h) -> std::optional<MetricLabels> { return MetricLabels{{"version", h.version}}; }, one},
};

template <class Subject, size_t N>
void list_families(std::vector<MetricFamilyDoc>& out, const Family<Subject> (&families)[N]) {
  for (const Family<Subject>& f : families) out.push_back({f.name, f.type, f.help});
}

}  // namespace

std::vector<MetricFamilyDoc> metric_families() {
  std::vector<MetricFamilyDoc> out;
  list_families(out, kHostFamilies);
  list_families(out, kGpuFamilies);
  list_families(out, kMigFamilies);
  list_families(out, kProcessInfoFamilies);
  list_families(out, kProcessValueFamilies);
  out.push_back({kFindingFamily, kGauge, kFindingHelp});
  list_families(out, kHealthFamilies);
  return out;
}

std::vector<ProcessLabelDoc> process_info_labels() {
  std::vector<ProcessLabelDoc> out;
  for (const ProcessLabel& l : kProcessInfoLabels) out.push_back({l.name, l.join_key});
  return out;
}

std::vector<uint32_t> kept_processes(const PsResult& ps, size_t max) {
  struct Process {
    uint32_t pid;
    bool alerting = false;  // a warning or error finding
    uint64_t memory_mib = 0;
  };
  std::map<uint32_t, Process> by_pid;
  for (const ProcessRow& r : ps.rows) {
    Process& p = by_pid.emplace(r.pid, Process{r.pid}).first->second;
    p.memory_mib += r.used_memory_mib.value_or(0);
    for (const Finding* f : findings_of(r, ps)) p.alerting |= f->severity >= Severity::kWarning;
  }
  std::vector<Process> order;
  for (const auto& [pid, p] : by_pid) order.push_back(p);
  std::sort(order.begin(), order.end(), [](const Process& a, const Process& b) {
    if (a.alerting != b.alerting) return a.alerting;
    if (a.memory_mib != b.memory_mib) return a.memory_mib > b.memory_mib;
    return a.pid < b.pid;
  });
  std::vector<uint32_t> kept;
  for (size_t i = 0; i < order.size() && i < max; ++i) kept.push_back(order[i].pid);
  std::sort(kept.begin(), kept.end());
  return kept;
}

FrameSeries add_frame_metrics(Exposition& out, const MetricsInput& in, const SeriesBudget& budget) {
  const Snapshot& s = in.snapshot;
  auto lease_of = [&](const std::string& uuid) -> const LeaseState* {
    if (uuid.empty()) return nullptr;
    auto it = in.leases.find(uuid);
    return it != in.leases.end() && it->second ? &*it->second : nullptr;
  };
  write_families(out, kHostFamilies, std::vector<HostSubject>{{&s, &in.host}});

  std::vector<GpuSubject> gpus;
  std::vector<MigSubject> migs;
  for (const Gpu& g : s.gpus) {
    gpus.push_back({&g, lease_of(g.uuid)});
    for (const MigDevice& d : g.mig_devices) migs.push_back({&g, &d});
  }
  write_families(out, kGpuFamilies, gpus);
  write_families(out, kMigFamilies, migs);

  // The processes (NVML pids), and under --max-processes those that keep their series.
  FrameSeries said;
  std::set<uint32_t> pids;
  for (const ProcessRow& r : in.ps.rows) pids.insert(r.pid);
  said.processes = pids.size();
  std::vector<uint32_t> kept;
  if (budget.max_processes && *budget.max_processes < pids.size()) {
    kept = kept_processes(in.ps, *budget.max_processes);
    said.dropped_processes = pids.size() - kept.size();
  }
  // One row per (process, GPU, list): a PID listed twice in one list counts once.
  std::set<std::string> seen;
  std::vector<ProcessSubject> processes;
  if (budget.process_series != ProcessSeries::kNone)
    for (const ProcessRow& r : in.ps.rows) {
      if (said.dropped_processes > 0 && !std::binary_search(kept.begin(), kept.end(), r.pid)) continue;
      if (seen.insert(std::to_string(r.pid) + " " + r.type + " " + r.uuid).second)
        processes.push_back({&r, lease_of(r.uuid), &budget});
    }
  write_families(out, kProcessInfoFamilies, processes);
  if (budget.process_series == ProcessSeries::kAll) write_families(out, kProcessValueFamilies, processes);
  add_findings(out, in, processes, budget.min_severity);
  return said;
}

void add_health_metrics(Exposition& out, const ExporterHealth& h) {
  write_families(out, kHealthFamilies, std::vector<ExporterHealth>{h});
}

std::string metrics_text(const std::optional<MetricsInput>& frame, ExporterHealth h, const SeriesBudget& budget) {
  Exposition out;
  if (frame) {
    FrameSeries said = add_frame_metrics(out, *frame, budget);
    if (budget.max_processes) h.capped_processes = said.dropped_processes;
  }
  add_health_metrics(out, h);
  return out.text();
}

std::string cuda_unknown_warning(const std::string& cuda_error) {
  return "gpumap metrics: warning: CUDA's view is unknown, written without cuda_ordinal and findings "
         "(gpumap_exporter_cuda_up 0): " + cuda_error + "\n";
}

}  // namespace gpumap
