#include "findings/severity.h"

namespace gpumap {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "?";
}

Severity worst(const std::vector<Finding>& fs) {
  Severity w = Severity::kInfo;
  for (const Finding& f : fs)
    if (f.severity > w) w = f.severity;
  return w;
}

}  // namespace gpumap
