// `gpumap metrics` and `gpumap serve` as an operation: one metrics frame is a fresh snapshot,
// the ps join with its findings, every GPU's lease, and the host's own findings (doctor's rules
// for a process started with no CUDA variables).  Rendering is output/metrics_text.h.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "answer/metrics_answer.h"
#include "driver/driver_source.h"
#include "model/error.h"
#include "model/finding.h"
#include "model/seams.h"
#include "model/snapshot.h"
#include "session/ps.h"

namespace gpumap {

struct MetricsFrame {
  Snapshot snapshot;
  /// The ps frame; its leases hold every GPU that has a UUID, not only those with rows.
  PsFrame ps;
  /// doctor's findings for a process started here with no CUDA variables (the host's traps:
  /// order-differs, MIG, ...): not gpumap's own environment, which says nothing about the host.
  std::vector<Finding> host_findings;
  /// Whether CUDA's view is known.  false: the CUDA probe (cuInit in a child, needed on a
  /// mixed-model or MIG host for CUDA's default order) failed or did not answer within its bound;
  /// the frame still holds NVML's GPUs and processes, without cuda_ordinal and without the
  /// findings that need CUDA's view (`cuda_error` says why).
  bool cuda_known = true;
  std::string cuda_error;
  double read_seconds = 0;  // how long reading and joining took
  double read_unix = 0;     // when the read ended (seconds since the epoch)
};

struct MetricsReadOptions {
  double probe_timeout_s = -1;  // bound on the CUDA probe (DriverSource::probe_timeout_s; <0: the driver's)
  bool ask_cuda = true;         // false: do not run the probe at all (CUDA's view unknown when it is needed)
  KubeletCache* kubelets = nullptr;  // the kubelet's answer across frames (serve); null: asked each frame
};

/// Reads one frame in a session of its own (a fresh snapshot every call; safe to call from a
/// thread of its own).  Throws Error as the snapshot does (kExitNoDriver, kExitError) when NVML
/// fails; a failed or hung CUDA probe does not throw: the frame says cuda_known false.
MetricsFrame read_metrics_frame(const DriverSource& driver, const Seams& seams, const MetricsReadOptions& opt = {});

/// Writes `text` to `path` atomically (a temporary file beside it, renamed over it), mode 0644,
/// for node_exporter's textfile collector.  Throws Error(kExitError) naming the file and why
/// (the old file is kept).
void write_metrics_textfile(const std::string& path, const std::string& text);

/// The parts of `f` the series are rendered from (output/metrics_text.h).
inline MetricsInput metrics_input(const MetricsFrame& f) {
  return {f.snapshot, f.ps.result, f.ps.leases, f.host_findings, f.ps.host};
}

/// `gpumap metrics`: one frame, and the health series' values for it.
struct MetricsOnce {
  std::optional<MetricsFrame> frame;  // none when the driver read failed
  ExporterHealth health;              // up, read time, cuda_up; driver_errors 1 when the read failed
  /// Why the read failed (kExitNoDriver, kExitError): the health series still say so (up 0), then
  /// the command fails with it.  A usage error is thrown instead.
  std::optional<Error> failed;
};
MetricsOnce read_metrics_once(const DriverSource& driver, const Seams& seams, const std::string& version);

}  // namespace gpumap
