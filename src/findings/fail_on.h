// `--fail-on warning|error`, the health-check threshold of every command that takes it (ps,
// fleet): one parser, so each says the same of a bad value and takes the same words.
#pragma once
#include <optional>
#include <string>

#include "model/finding.h"

namespace gpumap {

/// --fail-on's value: kWarning for "warning", kError for "error", nullopt when not given.
/// Error(kExitUsage) for anything else, naming `command` and the value ("ps: --fail-on `info` is
/// not a severity it takes") with the two it takes as the hint.
std::optional<Severity> parse_fail_on_severity(const std::string& command, const std::optional<std::string>& value);

}  // namespace gpumap
