// A finding as a plain value: one trap gpumap saw, with the evidence, why it matters and a fix
// to paste.  The rules that make them live in findings/ (findings/severity.h adds severity_name
// and worst); results that carry them (a ps row, a job report) only hold them.
#pragma once
#include <string>

namespace gpumap {

enum class Severity { kInfo, kWarning, kError };

struct Finding {
  std::string id;        // stable, documented in docs/findings.md ("order-differs")
  Severity severity = Severity::kWarning;
  std::string message;   // what was seen and why it matters
  std::string fix;       // a command or line the user can paste; "" when nothing to do
  std::string note = {};  // advice that is not a command (code to change, another way); "" when none
};

}  // namespace gpumap
