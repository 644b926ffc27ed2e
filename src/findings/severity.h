// A finding: one trap gpumap saw, with the evidence, why it matters and a fix to paste
// (the value is model/finding.h; its names and the worst of a list are here).
#pragma once
#include <vector>

#include "model/finding.h"

namespace gpumap {

const char* severity_name(Severity s);

/// The highest severity present, or kInfo for none.
Severity worst(const std::vector<Finding>& fs);

}  // namespace gpumap
