// A finding: one trap gpumap saw, with the evidence, why it matters and a fix to paste.
#pragma once
#include <string>
#include <vector>

namespace gpumap {

enum class Severity { kInfo, kWarning, kError };
const char* severity_name(Severity s);

struct Finding {
  std::string id;        // stable, documented in docs/findings.md ("order-differs")
  Severity severity = Severity::kWarning;
  std::string message;   // what was seen and why it matters
  std::string fix;       // a command or line the user can paste; "" when nothing to do
};

/// The highest severity present, or kInfo for none.
Severity worst(const std::vector<Finding>& fs);

}  // namespace gpumap
