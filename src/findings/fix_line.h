// A fix as what it does to the environment: the `export A=1 B=2`, `unset A` statements (joined by
// `;` or `&&`, a `# ...` comment at the end) every finding's `fix` is written in, read back, applied
// to an Environment, and written again as one line.  What the combined fix of several findings is
// made of (session/diagnose.h combined_fix).  Pure.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"

namespace gpumap {

/// One statement of a fix: set `name` to `value`, or unset it (nullopt).
struct FixStep {
  std::string name;
  std::optional<std::string> value;
};

/// The statements of a fix line; nullopt when some part is not an export or unset of variables
/// (a command to run, a relaunch line): such a fix cannot be combined with others.
std::optional<std::vector<FixStep>> parse_fix_line(const std::string& fix);

/// `env` with the steps applied in order.
Environment apply_fix_steps(Environment env, const std::vector<FixStep>& steps);

/// The one line that turns `from` into `to` for the variables in `names` (in that order):
/// `unset A B; export C=1 D=2` (values quoted for the shell where they need it); "" when they agree.
std::string fix_line_between(const Environment& from, const Environment& to, const std::vector<std::string>& names);

/// "A=1 B=2": name=value pairs as `export` takes them, in order, values as given (verify's fix:
/// UUIDs and the order's name, which need no quoting).  "" for none.
std::string assignments_line(const std::vector<std::pair<std::string, std::string>>& vars);

}  // namespace gpumap
