// A finding as a plain value: one trap gpumap saw, with the evidence, why it matters and a fix
// to paste.  The rules that make them live in findings/ (findings/severity.h adds severity_name
// and worst); results that carry them (a ps row, a job report) only hold them.
#pragma once
#include <string>
#include <vector>

namespace gpumap {

enum class Severity { kInfo, kWarning, kError };

/// A finding folded into the one that caused it (findings/fold.h): its id and message, kept as
/// evidence of the cause.
struct FoldedFinding {
  std::string id;
  std::string message;
};

struct Finding {
  std::string id;        // stable, documented in docs/findings.md ("order-differs")
  Severity severity = Severity::kWarning;
  std::string message;   // what was seen and why it matters
  std::string fix;       // a command or line the user can paste; "" when nothing to do
  std::string note = {};  // advice that is not a command (code to change, another way); "" when none
  std::vector<FoldedFinding> also = {};  // findings of the same cause, folded into this one (findings/fold.h)
};

}  // namespace gpumap
