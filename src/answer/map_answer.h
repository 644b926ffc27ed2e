// What `gpumap map` answers (session/map.h computes it; output/map_view.h renders it): the
// CUDA view of one environment, the GPUs it hides, the asked cuda:N, every finding, and with
// --check the driver's own answer beside the prediction.  The one answer the CLI's table, its
// JSON and its log line are written from.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "env/environment.h"
#include "model/error.h"
#include "model/finding.h"
#include "model/mapping.h"
#include "resolve/gpu_selector.h"

namespace gpumap {

/// map --check: the prediction against the driver.
struct MapCheck {
  Mapping driver;                // what the driver's probe said
  bool agree = false;            // the same devices in the same order and the same error
  bool refreshed_cache = false;  // the cached base order disagreed: asked again, cache rewritten,
                                 // MapAnswer::mapping predicted from the new order
};

/// A GPU the environment leaves out.
struct HiddenGpu {
  uint32_t nvml_index = 0;
  std::string uuid;
};

struct MapAnswer {
  Environment env;                        // the environment answered (the process's, or --env/--unset)
  Mapping mapping;                        // predicted (or the driver's with --probe)
  GpuPlace where;                         // outer numbers: a container's host indices, Slurm ids
  std::vector<CudaOrdinalAnswer> asked;   // `map cuda:N`: what each asked cuda:N is
  std::vector<HiddenGpu> not_visible;     // the host's GPUs this environment does not see
  std::vector<Finding> findings;          // environment_findings (session/explain.h)
  std::optional<MapCheck> check;          // --check only
  int exit_code() const { return check && !check->agree ? kExitMismatch : kExitOk; }
};

/// map --batch: one line of the file, predicted.
struct MapBatchCase {
  size_t line = 0;   // the file's line (1-based; blank lines skipped, not renumbered)
  Environment env;   // that line's environment
  Mapping mapping;   // the prediction in it
};

/// map --batch's answer: the cases in file order, each predicted when `next` is called (nullopt
/// after the last).  A sequence, not a list: a file of thousands of 100 000-character values is
/// never held as mappings, and a renderer writes each line's answer as soon as it exists.
struct MapBatchAnswer {
  std::function<std::optional<MapBatchCase>()> next;
};

}  // namespace gpumap
