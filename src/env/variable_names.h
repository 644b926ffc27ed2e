// Variable names a small edit away from one gpumap reads (CUDA_VISIBLE=0, CUDA_VISIBLE_DEVICE,
// CUDA_VISIABLE_DEVICES, cuda_visible_devices, LOCAL_RANKS): nothing reads them, so the setting
// silently does nothing.  Pure: the environment comes in as a value.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "env/environment.h"

namespace gpumap {

/// A name that nothing reads, and the name it was most likely meant to be.
struct MisspelledVariable {
  std::string name;   // as set ("CUDA_VISIBLE")
  std::string meant;  // the variable gpumap reads ("CUDA_VISIBLE_DEVICES")
  std::string value;  // its value
  std::string what;   // what the meant variable does, for the message ("the GPUs CUDA may use")
};

/// One variable a misspelling is judged against, with the largest edit distance read as a typo of
/// it (1 for names short enough that two edits reach other real names: LOCAL_RANK -> LOCAL_SIZE
/// is four, but GLOBAL_RANK is two) and its shortest truncation ("" when none is read as one).
struct MisspellingTarget {
  const char* name;
  size_t max_distance;
  const char* shortest_truncation;
  const char* what;
};

/// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES, the launchers' local-rank
/// variables (env/launcher.h kLocalRankVariables) and LOCAL_WORLD_SIZE.
const std::vector<MisspellingTarget>& misspelling_targets();

/// Real variable names that are never read as a misspelling though they are close to a target
/// (PMIX_LOCAL_RANK is one edit from PMI_LOCAL_RANK; every variable gpumap reads).
bool known_variable_name(std::string_view name);

/// Edit distance of two names, case-insensitive (insertion, deletion, substitution and the swap of
/// two neighbours each count 1).
size_t name_distance(std::string_view a, std::string_view b);

/// Every name of `env` that is not a known variable, is a shell identifier, differs from a target
/// only by case, by at most the target's max_distance edits or as a truncation of it, while the
/// target itself is not set; the nearest target wins.  In the order of the names.
std::vector<MisspelledVariable> misspelled_variables(const Environment& env);

}  // namespace gpumap
