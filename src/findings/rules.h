// The rules: each trap from the field guides and the measured driver behaviour, as a
// function from (snapshot, environment, mapping) to findings.  Pure: no I/O.
// Every rule id is documented in docs/findings.md and has a test in rules_test.cc.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "env/environment.h"
#include "findings/severity.h"
#include "model/container_facts.h"
#include "model/snapshot.h"
#include "model/mapping.h"

namespace gpumap {

struct DiagnosisInput {
  const Snapshot& snapshot;
  const Environment& env;
  const Mapping& mapping;
  /// CUDA's base order under FASTEST_FIRST when known (to compare with nvidia-smi's).
  const std::vector<std::string>* fastest_first_order = nullptr;
  bool in_container = false;
  /// Inside a container: what it can open and was given (os/container.h, or a simulated host's
  /// `container` object); null when not read.  container-sees-more-gpus judges it.
  const ContainerFacts* container = nullptr;
  /// The frameworks the process has imported, name -> __version__ ("torch" -> "1.13.1"), when known
  /// (Python's diagnose()); null otherwise.  framework-cannot-parse-uuid keys on them.
  const std::map<std::string, std::string>* frameworks = nullptr;
};

/// Every finding for one environment: the entry rules (each CUDA_VISIBLE_DEVICES entry as the
/// parser saw it), the host rules (order, MIG, containers, what nvidia-smi's numbers mean here) and
/// the launcher rules (ranks, Slurm's allocation), in that order, each id at most once; a finding
/// another one caused (and whose fix is the cause's) is folded into it (findings/fold.h).  A finding
/// whose `fix` is set holds one shell line that, pasted, clears it (tests/cli_fixes_paste_test.cc);
/// prose goes to `note`.  An empty result means gpumap has nothing to say: the program started
/// in this environment gets the GPUs `mapping` lists.  Pure: reads nothing but `in`.
std::vector<Finding> diagnose(const DiagnosisInput& in);

/// True when `gpumap bind` set this environment's CUDA_VISIBLE_DEVICES (GPUMAP_BOUND, which bind
/// exports, still equals it): the narrowing to the rank's own GPU(s) is deliberate.
bool bound_by_gpumap(const Environment& env);

/// What a rank that `gpumap bind` narrowed must do instead of set_device(<rank variable>), in words
/// (bind's stderr line and the bound-rank finding).  `keep_visible_own`: bind --keep-visible gave it
/// that many GPUs of its own first and the other ranks' after them (LauncherEnv::bound_own).
std::string bound_rank_advice(const std::string& rank_variable, std::optional<uint32_t> keep_visible_own = std::nullopt);

}  // namespace gpumap
