#include "session/metrics.h"

#include <chrono>

#include "model/error.h"
#include "os/state_file.h"
#include "session/explain.h"

namespace gpumap {

MetricsFrame read_metrics_frame(const DriverSource& driver, const Seams& seams) {
  auto t0 = std::chrono::steady_clock::now();
  Session session(driver, Environment(), seams);
  MetricsFrame f;
  f.ps = read_ps_frame(session, LeasesOf::kEveryGpu);
  const Snapshot& s = session.snapshot();
  Environment clean;
  Mapping m = session.mapping(clean, false);
  f.host_findings = environment_findings(session, clean, m);
  f.snapshot = s;
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

}  // namespace gpumap
