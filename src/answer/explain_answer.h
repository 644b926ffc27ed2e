// `gpumap explain`'s answer: entry by entry, what CUDA, the container runtime and the launcher do
// with the variables in force, in words (session/explain.h computes it; output/explain_view.h
// writes it).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "env/environment.h"
#include "env/launcher.h"
#include "model/finding.h"
#include "model/mapping.h"
#include "model/snapshot.h"

namespace gpumap {

struct Explanation {
  const Snapshot* snapshot = nullptr;    // the session's (valid while it lives)
  Environment environment;               // the variables explained
  Mapping mapping;                       // what `env` gets
  std::vector<std::string> lines;        // explain_lines
  std::vector<std::string> entry_texts;  // explain_entry per CUDA_VISIBLE_DEVICES entry; "" for each
                                         // when CUDA_DEVICE_ORDER is invalid (no entry is read)
  std::vector<Finding> findings;         // diagnose
  /// The cuda:N a launcher's rank in `env` should use (the library's local_device()); nullopt
  /// where CUDA would fail to initialise.
  std::optional<LocalDevice> local_device;
};

}  // namespace gpumap
