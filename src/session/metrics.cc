#include "session/metrics.h"

#include <chrono>

#include "model/error.h"
#include "os/proc.h"
#include "os/state_file.h"
#include "session/explain.h"

namespace gpumap {

namespace {

// What needs CUDA's view is forgotten: one row may have been joined before the probe failed, and
// the findings of the others would read "sees no GPU" into a view that was never computed.
void forget_cuda_views(PsResult& res) {
  for (ProcessRow& r : res.rows) {
    r.view.reset();
    r.cuda_ordinal.reset();
    r.cuda_device_count.reset();
    r.rank_nvml_index.reset();
    r.bound_own.reset();
    r.cuda_error.reset();
    r.findings.clear();
    r.gpu_findings.clear();
  }
  res.views.clear();
  res.gpu_findings.clear();
}

}  // namespace

MetricsFrame read_metrics_frame(const DriverSource& driver, const Seams& seams, const MetricsReadOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  DriverSource d = driver;
  if (opt.probe_timeout_s >= 0) d.probe_timeout_s = opt.probe_timeout_s;
  Session session(d, Environment(), seams);
  MetricsFrame f;
  ReadOptions read = ps_read_options();
  read.sensors = true;
  session.snapshot(read);  // NVML: its failure is the frame's
  // CUDA's view: asked at most once per frame (the default order; then cached per boot).  A
  // failure stops the asking for this frame, and NVML's data is served without it.
  std::optional<std::string> cuda_failed;
  if (!opt.ask_cuda) cuda_failed = "not asked (the CUDA probe failed recently)";
  auto mapping = [&](const Environment& e) -> std::optional<Mapping> {
    if (cuda_failed) return std::nullopt;
    try {
      return session.mapping(e, false);
    } catch (const Error& err) {
      if (err.exit_code() == kExitUsage) throw;
      cuda_failed = err.what();
      return std::nullopt;
    }
  };
  f.ps = read_ps_frame(
      session, ProcFs(seams.proc_root), LeasesOf::kEveryGpu,
      [&](const Environment& e) {
        std::optional<Mapping> m = mapping(e);
        return m ? m->view : CudaView{};
      },
      {}, nullptr, opt.kubelets);
  Environment clean;
  if (std::optional<Mapping> m = mapping(clean); m && !cuda_failed) f.host_findings = environment_findings(session, clean, *m);
  if (cuda_failed) {
    forget_cuda_views(f.ps.result);
    f.host_findings.clear();
    f.cuda_known = false;
    f.cuda_error = *cuda_failed;
  }
  f.snapshot = session.snapshot();
  f.read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.read_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return f;
}

void write_metrics_textfile(const std::string& path, const std::string& text) {
  std::string err = write_file_atomically(path, text, 0644);
  if (!err.empty())
    throw Error(kExitError, path + ": " + err,
                "give a file in a folder this user may write (node_exporter's --collector.textfile.directory)");
}

MetricsOnce read_metrics_once(const DriverSource& driver, const Seams& seams, const std::string& version) {
  MetricsOnce m;
  m.health.version = version;
  try {
    m.frame = read_metrics_frame(driver, seams);
    m.health.up = true;
    m.health.read_seconds = m.frame->read_seconds;
    m.health.last_success_unix = m.frame->read_unix;
    m.health.cuda_up = m.frame->cuda_known;
  } catch (const Error& e) {
    if (e.exit_code() == kExitUsage) throw;
    m.failed = e;
    m.health.driver_errors = 1;
  }
  return m;
}

}  // namespace gpumap
