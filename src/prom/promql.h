// PromQL text built from values a person typed: a label value never changes the query's shape.
#pragma once
#include <string>
#include <vector>

namespace gpumap {

/// `s` as a PromQL double-quoted string literal: `"` and `\` escaped, control characters as \n, \t,
/// \xHH, so nothing in `s` can end the string.
std::string promql_string(const std::string& s);

/// `s` as an RE2 pattern that matches exactly `s` (every character outside [A-Za-z0-9_] escaped
/// with a backslash, control characters and bytes above 0x7f as \x{HH}).
std::string re2_literal(const std::string& s);

/// A label matcher `name=~"^(?:v1|v2)$"` matching any of `values` exactly (PromQL anchors regexes
/// already; the group keeps an alternation whole); `prefix`/`suffix` wrap the alternation as RE2
/// text (e.g. "(?i).*" and ".*" for a case-insensitive substring).  "" for no values.
std::string label_matcher(const std::string& name, const std::vector<std::string>& values, const std::string& prefix = "",
                          const std::string& suffix = "");

/// `metric{m1,m2}` with the non-empty matchers of `matchers`.
std::string selector(const std::string& metric, const std::vector<std::string>& matchers);

}  // namespace gpumap
