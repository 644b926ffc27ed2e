#include "findings/fail_on.h"

#include "model/error.h"
#include "model/text.h"

namespace gpumap {

std::optional<Severity> parse_fail_on_severity(const std::string& command, const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  if (*value == "warning") return Severity::kWarning;
  if (*value == "error") return Severity::kError;
  throw Error(kExitUsage, command + ": --fail-on `" + printable(*value) + "` is not a severity it takes",
              "--fail-on warning (a warning or an error fails) or --fail-on error");
}

}  // namespace gpumap
