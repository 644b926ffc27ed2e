#include "env/variable_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "env/launcher.h"
#include "model/env_vars.h"

namespace gpumap {
namespace {

char up(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = up(c);
  return out;
}

// A name a shell could have set, or one a program set through its environment with a '-' in it
// (TensorFlowOnSpark's TFNode.py set `CUDA_VISIBLE-DEVICES`, which nothing reads: tfos#64).
bool name_like(std::string_view n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0])) || n[0] == '-') return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

// Names set by real software that sit close to a target (each within its distance of one, or a
// truncation), besides those gpumap itself reads (model/env_vars.h).
constexpr const char* kKnownNear[] = {
    "PMIX_LOCAL_RANK",  // PMIx (Open MPI 5, srun --mpi=pmix): one edit from PMI_LOCAL_RANK
    "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_LOCAL_SIZE",
    "SLURM_JOBID", "SLURM_STEPID", "SLURM_NODEID", "SLURM_CPUS_ON_NODE",
    "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE", "LOCAL_SIZE",
    "ROLE_WORLD_SIZE", "GROUP_WORLD_SIZE", "GLOBAL_RANK", "NODE_RANK", "GROUP_RANK", "ROLE_RANK",
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "CUDA_DEVICE_MAX_CONNECTIONS",
};

}  // namespace

const std::vector<MisspellingTarget>& misspelling_targets() {
  static const std::vector<MisspellingTarget> table = [] {
    std::vector<MisspellingTarget> t = {
        {"CUDA_VISIBLE_DEVICES", 2, "CUDA_VISIBLE", "the GPUs CUDA may use: without it this process sees every GPU"},
        {"CUDA_DEVICE_ORDER", 2, "", "CUDA's device order: without it CUDA keeps FASTEST_FIRST"},
        {"NVIDIA_VISIBLE_DEVICES", 2, "NVIDIA_VISIBLE", "the GPUs the container runtime injects: without it the runtime's default applies"},
        {"LOCAL_WORLD_SIZE", 2, "", "how many ranks run on this node: without it gpumap and torchrun code cannot tell"},
    };
    for (const char* n : kLocalRankVariables)
      t.push_back({n, std::string_view(n).size() >= 16 ? size_t{2} : size_t{1}, "",
                   "the rank's local rank: without it code that does set_device(local rank) reads nothing"});
    return t;
  }();
  return table;
}

bool known_variable_name(std::string_view name) {
  for (const EnvVarInfo& v : kEnvVars)
    if (name == v.name) return true;
  return std::any_of(std::begin(kKnownNear), std::end(kKnownNear), [&](const char* n) { return name == n; });
}

size_t name_distance(std::string_view a_in, std::string_view b_in) {
  std::string a = upper(a_in), b = upper(b_in);
  // Optimal string alignment: three rows of the Levenshtein table, plus neighbour swaps.
  std::vector<size_t> two(b.size() + 1), one(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) one[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    two.swap(one);
    one.swap(cur);
  }
  return one[b.size()];
}

std::vector<MisspelledVariable> misspelled_variables(const Environment& env) {
  std::vector<MisspelledVariable> out;
  for (const auto& [name, value] : env.vars()) {
    if (known_variable_name(name) || !name_like(name) || name.size() > 64) continue;
    std::string u = upper(name);
    const MisspellingTarget* best = nullptr;
    size_t best_distance = 0;
    for (const MisspellingTarget& t : misspelling_targets()) {
      if (name == t.name) continue;
      std::string_view target = t.name, cut = t.shortest_truncation;
      size_t d = name_distance(u, target);
      bool truncation = !cut.empty() && u.size() >= cut.size() && u.size() < target.size() && target.substr(0, u.size()) == u;
      if (d > t.max_distance && !truncation) continue;
      if (truncation) d = 0;
      if (!best || d < best_distance) best = &t, best_distance = d;
    }
    if (best && !env.get(best->name)) out.push_back({name, best->name, value, best->what});
  }
  return out;
}

}  // namespace gpumap
