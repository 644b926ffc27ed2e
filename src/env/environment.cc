#include "env/environment.h"

#include "model/env_vars.h"

extern char** environ;

namespace gpumap {

namespace {
bool names(const std::string& entry, const std::string& name) {
  return entry.size() > name.size() && entry[name.size()] == '=' && entry.compare(0, name.size(), name) == 0;
}
}  // namespace

Environment Environment::from_strings(const std::vector<std::string>& entries) {
  Environment e;
  e.entries_ = entries;
  for (const std::string& s : entries) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    e.vars_.emplace(s.substr(0, eq), s.substr(eq + 1));  // first one wins, like getenv
  }
  return e;
}

Environment Environment::current() {
  std::vector<std::string> v;
  for (char** p = environ; p && *p; ++p) v.emplace_back(*p);
  return from_strings(v);
}

std::optional<std::string> Environment::get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

void Environment::set(const std::string& name, const std::string& value) {
  vars_[name] = value;
  bool placed = false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!names(*it, name)) {
      ++it;
    } else if (!placed) {
      *it++ = name + "=" + value;
      placed = true;
    } else {
      it = entries_.erase(it);
    }
  }
  if (!placed) entries_.push_back(name + "=" + value);
}

void Environment::unset(const std::string& name) {
  vars_.erase(name);
  std::erase_if(entries_, [&](const std::string& e) { return names(e, name); });
}

const std::vector<std::string>& relevant_variables() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const EnvVarInfo& v : kEnvVars)
      if (v.reported) out.push_back(v.name);
    return out;
  }();
  return names;
}

}  // namespace gpumap
