#include "session/metrics.h"

#include <chrono>

#include "session/explain.h"
#include "model/error.h"
#include "os/lease.h"
#include "os/proc.h"

namespace gpumap {

MetricsFrame read_metrics_frame(const DriverSource& driver, const Seams& seams) {
  auto t0 = std::chrono::steady_clock::now();
  Session session(driver, Environment(), seams);
  MetricsFrame f;
  f.ps = read_ps_frame(session);
  const Snapshot& s = session.snapshot();
  std::string dir = session.lease_dir();
  for (const Gpu& g : s.gpus) {
    if (g.uuid.empty() || f.ps.leases.count(g.uuid)) continue;  // a GPU NVML could not name has no lease
    try {
      f.ps.leases[g.uuid] = read_lease(dir, g.uuid);
    } catch (const Error&) {
      f.ps.leases[g.uuid] = std::nullopt;
    }
  }
  Environment clean;
  Mapping m = session.mapping(clean, false);
  f.host_findings = environment_findings(session, clean, m);
  f.snapshot = s;
  f.read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.read_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return f;
}

}  // namespace gpumap
