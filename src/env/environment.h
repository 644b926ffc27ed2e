// An environment as plain values: the variables that decide where CUDA work lands.
// Built from this process (environ), another process (/proc/PID/environ) or --env.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumap {

class Environment {
 public:
  Environment() = default;
  /// From "NAME=VALUE" strings (environ, /proc/PID/environ split on NUL).
  static Environment from_strings(const std::vector<std::string>& entries);
  /// This process's environment.
  static Environment current();

  /// The value, or nullopt when the variable is unset (set-but-empty is "").
  std::optional<std::string> get(std::string_view name) const;
  /// Sets NAME in place where it first was (later duplicates of NAME are dropped, so no
  /// program can read the old value), else appends it.
  void set(const std::string& name, const std::string& value);
  /// Removes every entry of NAME.
  void unset(const std::string& name);
  const std::map<std::string, std::string, std::less<>>& vars() const { return vars_; }
  /// The entries for execve: exactly those it was built from, in their order (duplicates and
  /// entries without '=' included), with set()/unset() applied.
  const std::vector<std::string>& to_strings() const { return entries_; }

 private:
  std::vector<std::string> entries_;
  std::map<std::string, std::string, std::less<>> vars_;  // first entry of each name, like getenv
};

/// Variables gpumap reports because they change which GPU CUDA work lands on.
const std::vector<std::string>& relevant_variables();

}  // namespace gpumap
