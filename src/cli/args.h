// Command-line parsing: each command declares its options; anything else is a usage
// error that names the option and the command.
#pragma once
#include "model/limits.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpumap {

struct OptionSpec {
  OptionSpec(std::string name_, bool takes_value_, bool repeatable_, std::string value_name_, std::string help_,
             std::vector<std::string> aliases_ = {})
      : name(std::move(name_)),
        takes_value(takes_value_),
        repeatable(repeatable_),
        value_name(std::move(value_name_)),
        help(std::move(help_)),
        aliases(std::move(aliases_)) {}
  std::string name;       // "--json"
  bool takes_value = false;
  bool repeatable = false;
  std::string value_name; // "FILE" (for --help)
  std::string help;
  std::vector<std::string> aliases;  // "-v": other spellings, read as `name`
};

class Args {
 public:
  /// Parses argv (after the command name).  Options may come in any order, as
  /// `--opt VALUE` or `--opt=VALUE`; `--` ends options and the rest is `rest()`.
  /// Throws Error(kExitUsage) for an unknown option or a missing value.
  /// `runs_command`: the command takes a program after `--` (run, bind); a stray word then
  /// gets an error that says so.
  Args(const std::string& command, const std::vector<OptionSpec>& specs, const std::vector<std::string>& argv,
       bool allow_positionals, bool runs_command = false);

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  const std::vector<std::string>& rest() const { return rest_; }
  bool has_rest() const { return saw_dashdash_; }

  /// An option's value as a non-negative integer / number; Error(kExitUsage) naming it otherwise.
  std::optional<long> integer(const std::string& name, long min, long max) const;
  std::optional<double> number(const std::string& name, double min, double max) const;
  /// The same, with a bound from model/limits.h (shared with the library).
  std::optional<long> integer(const std::string& name, const NumberBound& b) const {
    return integer(name, static_cast<long>(b.min), static_cast<long>(b.max));
  }
  std::optional<double> number(const std::string& name, const NumberBound& b) const { return number(name, b.min, b.max); }

 private:
  std::string command_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_, rest_;
  bool saw_dashdash_ = false;
};

/// The options every command takes.
std::vector<OptionSpec> common_options();

/// Formats the options for --help.
std::string format_options(const std::vector<OptionSpec>& specs);

}  // namespace gpumap
