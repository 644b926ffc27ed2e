// What the fake NVML and CUDA libraries do with a loaded host file beyond reading its fields:
// count calls against the injected faults, hide symbols, and hide the GPUs whose device node
// this process may not open.  The file itself is formats/host_file.h.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/host_file.h"

namespace gpumap::fake {

/// A host file's faults as one fake library serves them: the file's list (SimHost::faults) and,
/// beside it, how many calls have matched each fault so far (from 0 at each load).
class FaultPlan {
 public:
  FaultPlan() = default;
  explicit FaultPlan(std::vector<SimFault> faults);

  /// The fault that applies to this call now, or nullptr.  A call matches a fault when its name
  /// (without a _vN suffix) is the fault's `call` (or that is "*") and `gpu`/`mig` are the ones
  /// the fault names, if it names them.  Counts the call against every fault it matches; sleeps
  /// delay_ms, or forever for hang, before returning.  Safe to call from several threads.
  const SimFault* apply(const std::string& call, int gpu, int mig = -1);

 private:
  std::vector<SimFault> faults_;
  std::unique_ptr<std::atomic<uint64_t>[]> seen_;  // seen_[i]: calls that matched faults_[i]
};

/// Whether host file `host_path` lists `symbol` in missing_symbols (each file read once).  The
/// fake libraries export it as gpumapFakeHidesSymbol for gpumap's DynLib.
bool fake_hides_symbol(const std::string& host_path, const char* symbol);

/// With `dev_dir` set, keeps only the GPUs whose device node this process may open (an open that
/// fails with EPERM/EACCES, or a missing node, hides the GPU), as the real driver does under a
/// device cgroup or in a container; the rest keep PCI order, so NVML numbers them from 0.
/// `may_open(path)` is the seam (default: open(2) itself).  Without `dev_dir`, does nothing.
void keep_openable_gpus(SimHost& host, bool (*may_open)(const std::string& path) = nullptr);

}  // namespace gpumap::fake
