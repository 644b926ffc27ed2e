// `gpumap pick`'s answer: the GPUs chosen now (nothing leased), why, what was passed over and
// why, and the variables that give them in each form the command can print.
// session/lease_gpus.h pick_now computes it; output/pick_view.h renders it.
#pragma once
#include <string>
#include <vector>

#include "model/snapshot.h"
#include "resolve/launch_env.h"
#include "resolve/picker.h"

namespace gpumap {

struct PickAnswer {
  const Snapshot* snapshot = nullptr;  // the session's (valid while it lives)
  std::vector<std::string> uuids;      // the choice, in nvidia-smi order (cuda:0 first once set)
  std::vector<std::string> notes;      // why this set (NVLink, CPU affinity)
  std::vector<Rejection> passed_over;  // every visible GPU not chosen, with why
  LaunchVisibility visibility;         // the variables for `uuids` in the form asked (--cvd-form)
  /// The same as nvidia-smi indices (--format index); `by_index.form` is not kIndex where no
  /// index form is right on this host (`by_index.note` says why).
  LaunchVisibility by_index;
};

}  // namespace gpumap
