// `gpumap health`'s answer: per GPU, the faults the kernel log and NVML report (Xids, uncorrectable
// ECC, a lost GPU, hardware slowdown, failed row remapping), each tied to the processes it hit with
// their user, Slurm job and rank, torchrun rank, pod and own cuda:N (session/health.h computes it;
// output/health_view.h renders it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/xid_table.h"
#include "model/finding.h"
#include "model/gpu_fault.h"
#include "resolve/process_view.h"

namespace gpumap {

/// A process a fault is tied to.
struct FaultProcess {
  uint32_t pid = 0;
  /// The kernel line names it (pid=P); false: it was on the GPU when gpumap looked (the fault line
  /// names no pid, or the fault is a counter).
  bool named_by_kernel = false;
  std::optional<std::string> kernel_name;  // name=... of the kernel line
  /// Its row as `ps` computes it (state, user, command, job, ranks, pod, cuda_ordinal); for a pid
  /// that has exited, a row with state kExited and nothing else known.
  ProcessRow row;
};

struct HealthFault {
  std::string kind;  // "xid", "ecc-uncorrectable", "gpu-lost", "clock-slowdown", "remap-failed", "remap-pending"
  Severity severity = Severity::kWarning;
  std::optional<uint32_t> nvml_index;  // nullopt: the GPU the kernel line names is not one NVML lists
  std::string uuid;                    // "" when not known
  std::string pci;                     // as the kernel line wrote it, or NVML's bus id
  std::optional<XidRule> xid;          // kind "xid": the table's row (meaning, cause, action)
  std::optional<KernelXid> line;       // kind "xid": the kernel line
  std::optional<double> age_s;         // seconds before gpumap looked (kind "xid" with a time)
  std::string message;                 // in words
  std::string action;                  // what to do
  std::vector<FaultProcess> processes;
};

struct HealthGpu {
  uint32_t nvml_index = 0;
  std::string uuid, pci_bus_id, name;
  GpuFaultCounters counters;
  size_t xids_since_boot = 0;  // Xid lines of the kernel log for this GPU
  size_t xids_in_window = 0;   // of them, in --since's window (all when no window)
};

struct KernelLogState {
  std::string source;        // "/dev/kmsg" or "simulated host FILE"
  bool readable = false;
  std::string problem;       // why not, and the fix
  size_t lines = 0;          // records read
  size_t xids = 0;           // Xid lines found
};

struct HealthAnswer {
  bool simulated = false;
  std::string source;
  std::string host;
  KernelLogState kernel_log;
  std::optional<double> uptime_s;   // seconds since boot when gpumap looked
  std::optional<double> since_s;    // --since's window; nullopt: since boot
  std::vector<HealthGpu> gpus;      // NVML order
  std::vector<HealthFault> faults;  // Xids in log order, then each GPU's counters' faults
  Severity worst = Severity::kInfo; // the worst fault's (kInfo when none)
};

struct HealthRequest {
  std::optional<double> since_s;          // keep Xids of the last this many seconds
  std::string kmsg_path = "/dev/kmsg";    // the real host's kernel log
};

}  // namespace gpumap
