// One finding per cause: a finding that another one of the same run explains, and that the other's
// fix clears, is folded into it as an evidence line (Finding::also) instead of being said again.
// The folds are a table (folded id -> cause id, with the reason), not special cases in the rules;
// docs/findings.md lists them.  Pure.
#pragma once
#include <string>
#include <vector>

#include "model/finding.h"

namespace gpumap {

/// One row: `folded` is said as evidence of `cause` when both fire in one run and the cause's fix
/// is the folded one's too (or the folded one has none).
struct Fold {
  const char* folded;
  const char* cause;
  const char* reason;
};

/// Every fold, in the order they are tried (docs/findings.md, "One finding per cause").
const std::vector<Fold>& fold_table();

/// `fs` with every finding a fold row applies to moved into its cause's `also` (to the root cause
/// when the cause is itself folded), in the order of `fs`; the cause keeps its place and takes the
/// worse of the two severities.  A finding whose fix differs from its cause's stays on its own:
/// the cause's fix would not clear it.
std::vector<Finding> fold_by_cause(std::vector<Finding> fs);

/// The row of fold_table() that folds `folded` into `cause`; nullptr when none does.  `ps`'s process
/// findings (findings/ps_rules.cc) fold through it: a rank's finding and its GPU's are one cause.
const Fold* find_fold(const std::string& folded, const std::string& cause);

}  // namespace gpumap
