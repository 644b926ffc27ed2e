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
  void set(const std::string& name, const std::string& value) { vars_[name] = value; }
  void unset(const std::string& name) { vars_.erase(name); }
  const std::map<std::string, std::string, std::less<>>& vars() const { return vars_; }
  /// "NAME=VALUE" strings, for execve.
  std::vector<std::string> to_strings() const;

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

/// Variables gpumap reports because they change which GPU CUDA work lands on.
const std::vector<std::string>& relevant_variables();

}  // namespace gpumap
