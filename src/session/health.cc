#include "session/health.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "driver/fault_counters.h"
#include "formats/host_file.h"
#include "formats/kernel_log.h"
#include "model/error.h"
#include "os/host_id.h"
#include "os/kmsg.h"
#include "os/proc.h"
#include "session/kubelet.h"
#include "session/ps.h"

namespace gpumap {
namespace {

/// The GPU of `s` at the kernel line's address (domain, bus, device: the driver writes no
/// function), else the one the log's `GPU at PCI:` line names by UUID; -1 when none.
int gpu_of(const Snapshot& s, const KernelLog& log, const KernelXid& x) {
  if (x.address)
    for (const Gpu& g : s.gpus)
      if (g.pci && g.pci->domain == x.address->domain && g.pci->bus == x.address->bus &&
          g.pci->device == x.address->device)
        return static_cast<int>(g.nvml_index);
  std::string uuid = kernel_uuid_of(log, x);
  if (const Gpu* g = uuid.empty() ? nullptr : s.find_uuid(uuid)) return static_cast<int>(g->nvml_index);
  return -1;
}

std::string gpu_words(const Snapshot& s, const std::optional<uint32_t>& index, const std::string& pci) {
  if (index && *index < s.gpus.size()) return "nvidia-smi GPU " + std::to_string(*index);
  return "the GPU at PCI " + pci + " (not one NVML lists)";
}

}  // namespace

double parse_since(const std::string& text) {
  char* end = nullptr;
  double v = text.empty() ? -1 : std::strtod(text.c_str(), &end);
  std::string unit = end ? std::string(end) : "";
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : -1;
  if (!(v >= 0) || scale < 0 || !std::isfinite(v) || v * scale > 1e9 || text.find_first_of(" \t+-") != std::string::npos)
    throw Error(kExitUsage, "--since " + text + " is not a duration",
                "give seconds or a number with s, m, h or d: --since 90, --since 10m, --since 2h, --since 1d");
  return v * scale;
}

namespace {

// The kernel log: the simulated host's lines, or /dev/kmsg (what it says of itself into
// a.kernel_log, the host's uptime into a.uptime_s).
KernelLog read_log(Session& session, const HealthRequest& req, const Snapshot& s, ProcFs& proc, HealthAnswer& a) {
  std::string text;
  if (s.simulated) {
    SimHost h = load_host_file(session.driver().host_file);
    for (const std::string& line : h.kernel_log) text += line + "\n";
    a.kernel_log.source = "simulated host " + session.driver().host_file;
    a.kernel_log.readable = true;
    a.uptime_s = h.uptime_s;
  } else {
    KmsgRead k = read_kmsg(req.kmsg_path);
    a.kernel_log.source = k.path;
    a.kernel_log.readable = k.readable;
    a.kernel_log.problem = k.problem;
    text = std::move(k.text);
    a.uptime_s = proc.uptime_s();
  }
  KernelLog log = parse_kernel_log(text);
  a.kernel_log.lines = log.lines;
  a.kernel_log.xids = log.xids.size();
  if (!a.uptime_s)  // a simulated host without uptime_s: its last line is "now"
    for (const KernelXid& x : log.xids)
      if (x.usec) a.uptime_s = std::max(a.uptime_s.value_or(0), *x.usec / 1e6);
  return log;
}

// The Xids in the window (each counted on its GPU), and the pids they name on each GPU added to a
// copy of the snapshot, so `ps`'s join gives each its row whether NVML still lists it or not.
struct XidWindow {
  Snapshot joined;
  std::set<std::pair<uint32_t, uint32_t>> added;  // (nvml index, pid) NVML did not list
  std::vector<std::pair<const KernelXid*, int>> kept;
};

XidWindow xids_in_window(const Snapshot& s, const KernelLog& log, const HealthRequest& req, HealthAnswer& a) {
  XidWindow w{s, {}, {}};
  Snapshot& joined = w.joined;
  auto& added = w.added;
  auto& kept = w.kept;
  for (const KernelXid& x : log.xids) {
    int gi = gpu_of(s, log, x);
    if (gi >= 0) ++a.gpus[static_cast<size_t>(gi)].xids_since_boot;
    std::optional<double> age;
    if (x.usec && a.uptime_s) age = std::max(0.0, *a.uptime_s - *x.usec / 1e6);
    if (req.since_s && age && *age > *req.since_s) continue;
    if (gi >= 0) ++a.gpus[static_cast<size_t>(gi)].xids_in_window;
    kept.emplace_back(&x, gi);
    if (gi < 0 || !x.pid) continue;
    Gpu& g = joined.gpus[static_cast<size_t>(gi)];
    if (!g.processes) g.processes.emplace();
    bool listed = false;
    for (const GpuProcess& p : *g.processes) listed = listed || p.pid == *x.pid;
    if (!listed && added.insert({g.nvml_index, *x.pid}).second) {
      GpuProcess p;
      p.pid = *x.pid;
      p.type = "compute";
      g.processes->push_back(p);
    }
  }
  return w;
}

using ProcessesOnGpu = std::function<std::vector<FaultProcess>(uint32_t)>;

// One Xid line as a fault, tied to the pid it names (its `ps` row, or what the line says of a
// process gone) or, naming none, to the processes on its GPU now.
HealthFault xid_fault(const Snapshot& s, const KernelLog& log, const KernelXid* x, int gi, const HealthAnswer& a,
                      const PsResult& ps, const ProcessesOnGpu& on_gpu) {
  HealthFault f;
  f.kind = "xid";
  f.xid = xid_rule(x->xid);
  f.severity = f.xid->severity;
  f.line = *x;
  f.pci = x->pci;
  if (gi >= 0) {
    f.nvml_index = static_cast<uint32_t>(gi);
    f.uuid = s.gpus[static_cast<size_t>(gi)].uuid;
  } else {
    f.uuid = kernel_uuid_of(log, *x);
  }
  if (x->usec && a.uptime_s) f.age_s = std::max(0.0, *a.uptime_s - *x->usec / 1e6);
  f.message = "Xid " + std::to_string(x->xid) + " on " + gpu_words(s, f.nvml_index, x->pci) + ": " + f.xid->meaning;
  f.action = f.xid->action;
  if (x->pid) {
    bool found = false;
    for (const ProcessRow& r : ps.rows)
      if (f.nvml_index && r.nvml_index == *f.nvml_index && r.pid == *x->pid) {
        f.processes.push_back({r.pid, true, x->process_name, r});
        found = true;
      }
    if (!found) {  // a GPU NVML does not list: only what the line says
      ProcessRow r;
      r.pid = *x->pid;
      r.state = ProcessState::kExited;
      f.processes.push_back({*x->pid, true, x->process_name, r});
    }
  } else if (f.nvml_index) {
    f.processes = on_gpu(*f.nvml_index);
  }
  return f;
}

// The counters' faults: now, tied to the processes on the GPU now.
void counter_faults(const HealthAnswer& a, const ProcessesOnGpu& on_gpu, std::vector<HealthFault>& out) {
  for (const HealthGpu& g : a.gpus) {
    const GpuFaultCounters& c = g.counters;
    auto counter_fault = [&](const char* kind, Severity sev, std::string message, std::string action) {
      HealthFault f;
      f.kind = kind;
      f.severity = sev;
      f.nvml_index = g.nvml_index;
      f.uuid = g.uuid;
      f.pci = g.pci_bus_id;
      f.message = "nvidia-smi GPU " + std::to_string(g.nvml_index) + ": " + std::move(message);
      f.action = std::move(action);
      f.processes = on_gpu(g.nvml_index);
      out.push_back(std::move(f));
    };
    if (c.lost)
      counter_fault("gpu-lost", Severity::kError, "the GPU is lost (NVML answers NVML_ERROR_GPU_IS_LOST)",
                    "drain the node and reboot it; check power, cooling and the card's seating (Xid 79)");
    if (c.ecc_uncorrected_volatile.value_or(0) > 0)
      counter_fault("ecc-uncorrectable", Severity::kError,
                    std::to_string(*c.ecc_uncorrected_volatile) +
                        " uncorrectable ECC errors since the driver loaded (volatile counter)",
                    "drain the GPU and reset it (nvidia-smi -r -i " + std::to_string(g.nvml_index) +
                        " once idle); if they come back, service the card");
    if (c.remapped_rows_failed.value_or(false))
      counter_fault("remap-failed", Severity::kError, "a row remapping failed: the GPU has no spare rows left",
                    "drain the GPU and have the card serviced");
    else if (c.remapped_rows_pending.value_or(false) || c.retired_pages_pending.value_or(false))
      counter_fault("remap-pending", Severity::kWarning,
                    "a memory row remapping (or page retirement) is pending until the GPU is reset",
                    "reset the GPU when it is idle (nvidia-smi -r -i " + std::to_string(g.nvml_index) + ")");
    if (c.clock_event_reasons && (*c.clock_event_reasons & kClockEventHardware)) {
      std::string names;
      for (const std::string& n : clock_event_names(*c.clock_event_reasons & kClockEventHardware))
        names += (names.empty() ? "" : ", ") + n;
      counter_fault("clock-slowdown", Severity::kWarning, "the hardware slows the GPU's clocks down now (" + names + ")",
                    "check cooling and power delivery (nvidia-smi -q -d PERFORMANCE, TEMPERATURE, POWER)");
    }
  }
}

}  // namespace

HealthAnswer read_health(Session& session, const HealthRequest& req) {
  const Snapshot& s = session.snapshot(ps_read_options());
  HealthAnswer a;
  a.simulated = s.simulated;
  a.source = s.source;
  a.host = read_hostname();
  a.since_s = req.since_s;
  std::vector<GpuFaultCounters> counters = read_fault_counters(session.driver());
  ProcFs proc(session.seams().proc_root);
  KernelLog log = read_log(session, req, s, proc, a);
  for (const Gpu& g : s.gpus) {
    HealthGpu hg{g.nvml_index, g.uuid, g.pci_bus_id, g.name, {}, 0, 0};
    if (g.nvml_index < counters.size()) hg.counters = counters[g.nvml_index];
    hg.counters.nvml_index = g.nvml_index;
    if (hg.counters.uuid.empty()) hg.counters.uuid = g.uuid;
    a.gpus.push_back(std::move(hg));
  }
  XidWindow w = xids_in_window(s, log, req, a);
  PidNamespaceView ns = pid_namespace_view(proc, s.simulated, session.seams().nvml_pid_ns);
  std::optional<KubeletReply> kubelet;
  PsResult ps = build_ps(
      w.joined, ns, [&](uint32_t pid) { return proc.read(pid); },
      [&](const Environment& e) { return session.mapping(e, false).view; },
      [&](const std::set<std::string>&) -> const PodResources* {
        if (!kubelet) kubelet = ask_kubelet(session.seams());
        return kubelet->pods ? &*kubelet->pods : nullptr;
      },
      [&](const Snapshot& inside, const Environment& e) { return session.mapping_in(inside, e).view; });
  ProcessesOnGpu on_gpu = [&](uint32_t index) {  // the processes NVML lists on the GPU now
    std::vector<FaultProcess> out;
    for (const ProcessRow& r : ps.rows)
      if (r.nvml_index == index && !w.added.count({index, r.pid})) out.push_back({r.pid, false, std::nullopt, r});
    return out;
  };
  for (const auto& [x, gi] : w.kept) a.faults.push_back(xid_fault(s, log, x, gi, a, ps, on_gpu));
  counter_faults(a, on_gpu, a.faults);
  for (const HealthFault& f : a.faults)
    if (f.severity > a.worst) a.worst = f.severity;
  return a;
}

}  // namespace gpumap

namespace gpumap {

std::vector<Finding> gpu_fault_findings(Session& session, const std::vector<std::string>& uuids) {
  HealthAnswer a;
  try {
    a = read_health(session, {3600});
  } catch (const Error&) {
    return {};
  }
  const Snapshot& s = session.snapshot();
  std::vector<Finding> out;
  for (size_t ordinal = 0; ordinal < uuids.size(); ++ordinal) {
    const Gpu* gpu = s.find_device(uuids[ordinal]).gpu;
    if (!gpu) continue;
    Finding f{"gpu-faulted", Severity::kWarning, "", "", ""};
    std::string what, actions;
    for (const HealthFault& x : a.faults) {
      if (x.uuid != gpu->uuid) continue;
      bool card = x.severity == Severity::kError && !(x.xid && x.xid->cause == XidCause::kApplication);
      if (!card && x.kind != "clock-slowdown") continue;
      if (card) f.severity = Severity::kError;
      what += (what.empty() ? "" : "; ") + x.message;
      if (actions.find(x.action) == std::string::npos) actions += (actions.empty() ? "" : "; ") + x.action;
    }
    if (what.empty()) continue;
    f.message = "cuda:" + std::to_string(ordinal) + " here is nvidia-smi GPU " + std::to_string(gpu->nvml_index) +
                ", which has faulted: " + what;
    f.note = actions + " (`gpumap health` ties each fault to the processes it hit)";
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpumap
