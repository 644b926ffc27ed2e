// `gpumap doctor`'s answer: every rule against one environment, folded by cause, with the one line
// that fixes them all and the cuda:N numbering when it is not nvidia-smi's (session/diagnose.h
// computes it; output/doctor_view.h writes it).
#pragma once
#include <string>
#include <vector>

#include "env/environment.h"
#include "model/finding.h"
#include "model/snapshot.h"

namespace gpumap {

struct DoctorAnswer {
  const Snapshot* snapshot = nullptr;  // the session's (valid while it lives)
  Environment environment;             // the environment judged (this process's, with --env/--unset)
  /// The findings, one per cause; the reminders true of any list (ordinals-are-relative) only
  /// when asked for (-v); cache-unusable when the order cache cannot serve.
  std::vector<Finding> findings;
  /// One line for every fix above when two or more differ (session/diagnose.h combined_fix); "" otherwise.
  std::string combined_fix;
  /// "cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5" when cuda:N is not nvidia-smi's GPU N (or the
  /// outer layer's: a container's host number, a Slurm id) for some N (resolve/renumbering.h);
  /// "" when the numbering is what it looks like or no GPU is visible.
  std::string renumbering;
  size_t errors = 0, warnings = 0, infos = 0;  // the findings by severity
};

}  // namespace gpumap
