// The Prometheus text format 0.0.4 and gpumap's series (docs/metrics.md).  Value series carry
// only the keys to join on (uuid; pid, type, uuid); the `_info` series carry the identity labels.
#include "output/metrics_text.h"

#include <cmath>
#include <cstdio>
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

void add_frame_metrics(Exposition& out, const MetricsInput& in) {
  const Snapshot& s = in.snapshot;
  out.family("gpumap_driver_info", "gauge", "The driver gpumap read: versions and source (NVML or a simulated host)");
  out.sample({{"driver_version", clean(opt_text(s.driver_version))},
              {"cuda_driver_version", opt_text(s.cuda_driver_version)},
              {"source", clean(s.source)},
              {"simulated", s.simulated ? "true" : "false"}},
             1);

  out.family("gpumap_gpu_info", "gauge",
             "One per GPU, value 1: its identities (nvml_index is the nvidia-smi index; uuid the join key)");
  for (const Gpu& g : s.gpus)
    out.sample({{"uuid", clean(g.uuid)},
                {"nvml_index", std::to_string(g.nvml_index)},
                {"minor_number", opt_text(g.minor_number)},
                {"pci_bus_id", clean(g.pci_bus_id)},
                {"name", clean(g.name)},
                {"mig", g.mig_enabled ? (*g.mig_enabled ? "enabled" : "disabled") : ""}},
               1);
  // Value series are keyed on the UUID: a GPU whose UUID NVML could not read has none.
  auto per_gpu = [&](const char* name, const char* help, auto value_of) {
    out.family(name, "gauge", help);
    for (const Gpu& g : s.gpus) {
      if (g.uuid.empty()) continue;
      std::optional<double> v = value_of(g);
      if (v) out.sample({{"uuid", clean(g.uuid)}}, *v);
    }
  };
  per_gpu("gpumap_gpu_memory_total_bytes", "GPU memory in total", [](const Gpu& g) -> std::optional<double> {
    return g.memory_total_mib ? std::optional<double>(*g.memory_total_mib * kMiB) : std::nullopt;
  });
  per_gpu("gpumap_gpu_memory_used_bytes", "GPU memory in use", [](const Gpu& g) -> std::optional<double> {
    return g.memory_used_mib ? std::optional<double>(*g.memory_used_mib * kMiB) : std::nullopt;
  });
  per_gpu("gpumap_gpu_utilization_ratio", "Share of the last sample period a kernel ran (nvidia-smi utilization.gpu / 100)",
          [](const Gpu& g) -> std::optional<double> {
            return g.utilization_gpu ? std::optional<double>(*g.utilization_gpu / 100.0) : std::nullopt;
          });
  per_gpu("gpumap_gpu_memory_utilization_ratio", "Share of the last sample period memory was read or written (utilization.memory / 100)",
          [](const Gpu& g) -> std::optional<double> {
            return g.utilization_memory ? std::optional<double>(*g.utilization_memory / 100.0) : std::nullopt;
          });
  // What a monitor shows (nvidia-smi's names in the help; none where the driver does not support it).
  auto opt = [](const auto& v, double scale = 1) -> std::optional<double> {
    return v ? std::optional<double>(static_cast<double>(*v) * scale) : std::nullopt;
  };
  per_gpu("gpumap_gpu_temperature_celsius", "GPU core temperature (nvidia-smi temperature.gpu)",
          [&](const Gpu& g) { return opt(g.temperature_c); });
  per_gpu("gpumap_gpu_power_watts", "Board power draw (nvidia-smi power.draw)", [&](const Gpu& g) { return opt(g.power_draw_w); });
  per_gpu("gpumap_gpu_power_limit_watts", "Power management limit (nvidia-smi power.limit)",
          [&](const Gpu& g) { return opt(g.power_limit_w); });
  per_gpu("gpumap_gpu_enforced_power_limit_watts", "The power limit in force (nvidia-smi enforced.power.limit)",
          [&](const Gpu& g) { return opt(g.enforced_power_limit_w); });
  per_gpu("gpumap_gpu_sm_clock_hertz", "SM clock (nvidia-smi clocks.current.sm, in Hz)",
          [&](const Gpu& g) { return opt(g.clock_sm_mhz, 1e6); });
  per_gpu("gpumap_gpu_memory_clock_hertz", "Memory clock (nvidia-smi clocks.current.memory, in Hz)",
          [&](const Gpu& g) { return opt(g.clock_memory_mhz, 1e6); });
  per_gpu("gpumap_gpu_fan_speed_ratio", "Fan speed as a share of its maximum (nvidia-smi fan.speed / 100)",
          [&](const Gpu& g) { return opt(g.fan_speed_percent, 0.01); });
  per_gpu("gpumap_gpu_performance_state", "Performance state: 0 for P0 (most performance) to 15 for P15 (nvidia-smi pstate)",
          [&](const Gpu& g) { return opt(g.performance_state); });
  per_gpu("gpumap_gpu_ecc_corrected_volatile_errors",
          "Corrected ECC errors since the driver loaded (nvidia-smi ecc.errors.corrected.volatile.total)",
          [&](const Gpu& g) { return opt(g.ecc_corrected_volatile); });
  per_gpu("gpumap_gpu_ecc_uncorrected_volatile_errors",
          "Uncorrected ECC errors since the driver loaded (nvidia-smi ecc.errors.uncorrected.volatile.total)",
          [&](const Gpu& g) { return opt(g.ecc_uncorrected_volatile); });
  per_gpu("gpumap_gpu_processes", "Processes in NVML's compute and graphics lists of the GPU (none when the lists could not be read)",
          [](const Gpu& g) -> std::optional<double> {
            return g.processes ? std::optional<double>(g.processes->size()) : std::nullopt;
          });
  auto lease_of = [&](const std::string& uuid) -> const LeaseState* {
    auto it = in.leases.find(uuid);
    return it != in.leases.end() && it->second ? &*it->second : nullptr;
  };
  per_gpu("gpumap_gpu_leased", "1 when a gpumap lease (gpumap run/pick --lease) is held on the GPU, else 0",
          [&](const Gpu& g) -> std::optional<double> {
            const LeaseState* l = lease_of(g.uuid);
            return l ? std::optional<double>(l->held ? 1 : 0) : std::nullopt;
          });
  out.family("gpumap_gpu_lease_info", "gauge", "One per leased GPU, value 1: who holds the lease");
  for (const Gpu& g : s.gpus) {
    const LeaseState* l = g.uuid.empty() ? nullptr : lease_of(g.uuid);
    if (!l || !l->held) continue;
    out.sample({{"uuid", clean(g.uuid)},
                {"pid", l->holder ? std::to_string(l->holder->pid) : ""},
                {"user", l->holder ? clean(l->holder->user) : ""}},
               1);
  }

  out.family("gpumap_mig_device_info", "gauge", "One per MIG device, value 1: its identities and its GPU");
  for (const Gpu& g : s.gpus)
    for (const MigDevice& d : g.mig_devices)
      out.sample({{"uuid", clean(d.uuid)},
                  {"parent_uuid", clean(g.uuid)},
                  {"nvml_index", std::to_string(g.nvml_index)},
                  {"gpu_instance_id", opt_text(d.gpu_instance_id)},
                  {"compute_instance_id", opt_text(d.compute_instance_id)},
                  {"name", clean(d.name)}},
                 1);
  auto per_mig = [&](const char* name, const char* help, auto value_of) {
    out.family(name, "gauge", help);
    for (const Gpu& g : s.gpus)
      for (const MigDevice& d : g.mig_devices)
        if (std::optional<uint64_t> v = value_of(d)) out.sample({{"uuid", clean(d.uuid)}}, *v * kMiB);
  };
  per_mig("gpumap_mig_device_memory_total_bytes", "A MIG device's own memory in total",
          [](const MigDevice& d) { return d.memory_total_mib; });
  per_mig("gpumap_mig_device_memory_used_bytes", "A MIG device's own memory in use",
          [](const MigDevice& d) { return d.memory_used_mib; });

  // One row per (process, GPU, list): a PID listed twice in one list counts once.
  std::set<std::string> seen;
  std::vector<const ProcessRow*> rows;
  for (const ProcessRow& r : in.ps.rows)
    if (seen.insert(std::to_string(r.pid) + " " + r.type + " " + r.uuid).second) rows.push_back(&r);
  out.family("gpumap_process_info", "gauge",
             "One per process on a GPU, value 1: cuda_ordinal is the cuda:N that process calls this GPU "
             "(its own CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER; absent when it cannot see it or its "
             "environment is unknown)");
  for (const ProcessRow* r : rows) {
    std::string lease;
    if (const LeaseState* l = lease_of(r->uuid); l && l->held)
      lease = l->holder && r->local_pid && l->holder->pid == static_cast<int64_t>(*r->local_pid) ? "this-process" : "other";
    out.sample({{"pid", std::to_string(r->pid)},
                {"type", r->type},
                {"uuid", clean(r->uuid)},
                {"nvml_index", std::to_string(r->nvml_index)},
                {"cuda_ordinal", opt_text(r->cuda_ordinal)},
                {"state", process_state_name(r->state)},
                {"user", clean(opt_text(r->user))},
                {"command", r->command ? short_command(*r->command) : ""},
                {"slurm_job_id", clean(opt_text(r->slurm_job_id))},
                {"rank", clean(opt_text(r->global_rank))},
                {"local_rank", opt_text(r->rank)},
                {"lease", lease},
                // dcgm-exporter's label names, so dashboards join (empty outside a pod, or unnamed)
                {"pod", r->pod ? clean(r->pod->name) : ""},
                {"namespace", r->pod ? clean(r->pod->ns) : ""},
                {"container", r->pod ? clean(r->pod->container) : ""}},
               1);
  }
  out.family("gpumap_process_used_memory_bytes", "gauge", "GPU memory a process uses on the GPU (none when the driver does not say)");
  for (const ProcessRow* r : rows)
    if (r->used_memory_mib)
      out.sample({{"pid", std::to_string(r->pid)}, {"type", r->type}, {"uuid", clean(r->uuid)}},
                 *r->used_memory_mib * kMiB);

  out.family("gpumap_process_sm_utilization_ratio", "gauge",
             "Share of the last sample period the process's kernels ran on the GPU (NVML's per-process SM "
             "utilisation / 100; none when the driver does not support it)");
  for (const ProcessRow* r : rows)
    if (r->sm_utilization)
      out.sample({{"pid", std::to_string(r->pid)}, {"type", r->type}, {"uuid", clean(r->uuid)}}, *r->sm_utilization / 100.0);
  out.family("gpumap_process_memory_utilization_ratio", "gauge",
             "Share of the last sample period the process read or wrote GPU memory (NVML's per-process memory "
             "utilisation / 100)");
  for (const ProcessRow* r : rows)
    if (r->memory_utilization)
      out.sample({{"pid", std::to_string(r->pid)}, {"type", r->type}, {"uuid", clean(r->uuid)}},
                 *r->memory_utilization / 100.0);

  out.family("gpumap_finding", "gauge",
             "One per finding, value 1 (docs/findings.md): with pid and uuid for a process's (gpumap ps), "
             "without for the host's (gpumap doctor for a process with no CUDA variables)");
  std::set<std::string> said;
  for (const Finding& f : in.host_findings)
    if (said.insert(f.id).second) out.sample({{"id", f.id}, {"severity", severity_name(f.severity)}}, 1);
  for (const ProcessRow* r : rows) {
    std::vector<const Finding*> fs;  // its own, and its GPU's (once per GPU in ps: one sample per pid here)
    for (const Finding& f : r->findings) fs.push_back(&f);
    for (size_t g : r->gpu_findings) fs.push_back(&in.ps.gpu_findings[g].finding);
    for (const Finding* f : fs)
      if (said.insert(f->id + " " + std::to_string(r->pid) + " " + r->uuid).second)
        out.sample({{"id", f->id}, {"severity", severity_name(f->severity)}, {"pid", std::to_string(r->pid)},
                    {"uuid", clean(r->uuid)}},
                   1);
  }
}

void add_health_metrics(Exposition& out, const ExporterHealth& h) {
  out.family("gpumap_exporter_up", "gauge", "1 when the last driver read succeeded, 0 when it failed or did not answer in time");
  out.sample({}, h.up ? 1 : 0);
  out.family("gpumap_exporter_cuda_up", "gauge",
             "1 when the series served know CUDA's view (cuda_ordinal, findings), 0 when the CUDA probe failed or "
             "did not answer in time: NVML's GPUs and processes are still served, without them");
  if (h.cuda_up) out.sample({}, *h.cuda_up ? 1 : 0);
  out.family("gpumap_exporter_stale", "gauge",
             "1 when the series served come from an older read than the last attempt (the driver failed or hangs)");
  out.sample({}, h.stale ? 1 : 0);
  out.family("gpumap_exporter_read_duration_seconds", "gauge", "How long reading the driver and /proc took for the series served");
  if (h.read_seconds) out.sample({}, *h.read_seconds);
  out.family("gpumap_exporter_last_success_timestamp_seconds", "gauge", "When the last good driver read ended (Unix time)");
  if (h.last_success_unix) out.sample({}, *h.last_success_unix);
  out.family("gpumap_exporter_driver_errors_total", "counter", "Driver reads that failed or did not answer in time");
  out.sample({}, static_cast<double>(h.driver_errors));
  out.family("gpumap_exporter_scrapes_total", "counter", "/metrics requests answered (gpumap serve)");
  if (h.scrapes) out.sample({}, static_cast<double>(*h.scrapes));
  out.family("gpumap_build_info", "gauge", "gpumap's version, value 1");
  out.sample({{"version", h.version}}, 1);
}

std::string metrics_text(const std::optional<MetricsInput>& frame, const ExporterHealth& h) {
  Exposition out;
  if (frame) add_frame_metrics(out, *frame);
  add_health_metrics(out, h);
  return out.text();
}

std::string cuda_unknown_warning(const std::string& cuda_error) {
  return "gpumap metrics: warning: CUDA's view is unknown, written without cuda_ordinal and findings "
         "(gpumap_exporter_cuda_up 0): " + cuda_error + "\n";
}

}  // namespace gpumap
