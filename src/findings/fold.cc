#include "findings/fold.h"

#include <algorithm>
#include <string>

namespace gpumap {
namespace {

// The command of a fix without its trailing comment (`  # cuda:0 = ...`), which only describes it.
std::string command_of(const std::string& fix) {
  std::string c = fix.substr(0, fix.find(" #"));
  while (!c.empty() && c.back() == ' ') c.pop_back();
  return c;
}

const char kNoGpuCut[] = "the entry that names no GPU cuts the list there; that entry is this cause's";
const char kCudaFails[] = "cuInit fails because of this cause's entries; its fix makes CUDA see GPUs again";

}  // namespace

const std::vector<Fold>& fold_table() {
  static const std::vector<Fold> table = {
      // An entry that names no GPU for a reason a rule names: the cut is that entry's doing.
      {"list-cut-short", "container-keyword", "`all`/`none`/... is the entry that names no GPU"},
      {"list-cut-short", "slurm-global-id-as-index", "a Slurm global id past this step's GPUs is the entry that names none"},
      {"list-cut-short", "container-host-number", "a host number past the container's GPUs is the entry that names none"},
      {"list-cut-short", "space-before-uuid", kNoGpuCut},
      {"list-cut-short", "mixed-entry-kinds", kNoGpuCut},
      {"list-cut-short", "uuid-prefix-case", kNoGpuCut},
      {"list-cut-short", "mig-legacy-form", kNoGpuCut},
      {"list-cut-short", "signed-index", "a negative index is the entry that names no GPU"},
      // cuInit failing is the consequence; the entry rule that found why is the cause.
      {"cuda-init-fails", "container-keyword", kCudaFails},
      {"cuda-init-fails", "slurm-global-id-as-index", kCudaFails},
      {"cuda-init-fails", "container-host-number", kCudaFails},
      {"cuda-init-fails", "duplicate-gpu", "a GPU named twice is what makes cuInit fail (CUDA_ERROR_INVALID_DEVICE)"},
      {"cuda-init-fails", "device-order-invalid", "an invalid CUDA_DEVICE_ORDER is what makes cuInit fail"},
      {"cuda-init-fails", "uuid-without-prefix", kCudaFails},
      {"cuda-init-fails", "pci-address-entry", kCudaFails},
      {"cuda-init-fails", "mig-legacy-form", kCudaFails},
      {"cuda-init-fails", "space-before-uuid", kCudaFails},
      {"cuda-init-fails", "mixed-entry-kinds", kCudaFails},
      {"cuda-init-fails", "uuid-prefix-case", kCudaFails},
      {"cuda-init-fails", "signed-index", kCudaFails},
      {"cuda-init-fails", "list-cut-short", "the first entry names no GPU, so none is visible: the cut is why cuInit fails"},
      // Ranks and launchers: one launch mistake, one finding.
      {"local-rank-exceeds-visible", "world-size-exceeds-visible",
       "the rank past the GPUs is one of the ranks too many: the launcher starts more ranks per node than GPUs"},
      {"slurm-global-ids", "slurm-per-task-binding",
       "under per-task binding the ids are the task's own GPU(s); the per-task finding says which cuda:N to use"},
      // Processes (`ps`, `top`, `metrics`, `fleet`): a rank's finding and its GPU's, one cause.
      {"rank-on-wrong-gpu", "ranks-share-gpu",
       "a rank on another rank's GPU is one of the ranks that share it: the program ignores its local rank"},
      {"ranks-share-gpu", "stray-context",
       "the rank works on its own GPU; only its stray context shares the other rank's (it does not ignore its local rank)"},
  };
  return table;
}

const Fold* find_fold(const std::string& folded, const std::string& cause) {
  for (const Fold& row : fold_table())
    if (folded == row.folded && cause == row.cause) return &row;
  return nullptr;
}

std::vector<Finding> fold_by_cause(std::vector<Finding> fs) {
  // into[i]: the finding i folds into (itself when none), followed to the root.
  std::vector<size_t> into(fs.size());
  for (size_t i = 0; i < fs.size(); ++i) {
    into[i] = i;
    for (const Fold& row : fold_table()) {
      if (fs[i].id != row.folded) continue;
      auto cause = std::find_if(fs.begin(), fs.end(), [&](const Finding& c) { return c.id == row.cause; });
      if (cause == fs.end()) continue;
      if (!fs[i].fix.empty() && command_of(fs[i].fix) != command_of(cause->fix)) continue;  // its own fix: its own finding
      into[i] = static_cast<size_t>(cause - fs.begin());
      break;
    }
  }
  auto root = [&](size_t i) {
    for (size_t steps = 0; into[i] != i && steps < fs.size(); ++steps) i = into[i];
    return i;
  };
  for (size_t i = 0; i < fs.size(); ++i) {
    size_t r = root(i);
    if (r == i) continue;
    fs[r].severity = std::max(fs[r].severity, fs[i].severity);
    fs[r].also.push_back({fs[i].id, fs[i].message});
    for (FoldedFinding& f : fs[i].also) fs[r].also.push_back(std::move(f));
  }
  std::vector<Finding> out;
  for (size_t i = 0; i < fs.size(); ++i)
    if (root(i) == i) out.push_back(std::move(fs[i]));
  return out;
}

}  // namespace gpumap
