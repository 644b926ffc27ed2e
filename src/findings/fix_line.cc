#include "findings/fix_line.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace gpumap {
namespace {

bool valid_name(const std::string& n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string shell_word(const std::string& v) {
  bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ',' || c == '-' || c == '_' || c == '.' || c == ':' ||
           c == '/' || c == '+' || c == '=';
  });
  if (plain) return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<std::vector<FixStep>> parse_fix_line(const std::string& fix) {
  std::string code = fix.substr(0, fix.find(" #"));
  if (code.rfind('#', 0) == 0) code.clear();
  // Quotes, expansions and redirections are not what the rules write: not combinable.
  if (code.find_first_of("'\"`$<>|()\\") != std::string::npos) return std::nullopt;
  std::vector<std::string> statements;
  std::string cur;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == ';' || code.compare(i, 2, "&&") == 0) {
      statements.push_back(cur);
      cur.clear();
      if (code[i] == '&') ++i;
    } else {
      cur += code[i];
    }
  }
  statements.push_back(cur);
  std::vector<FixStep> steps;
  for (const std::string& st : statements) {
    std::istringstream in(st);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    if (w.empty()) continue;
    if (w[0] == "unset") {
      if (w.size() < 2) return std::nullopt;
      for (size_t k = 1; k < w.size(); ++k) {
        if (!valid_name(w[k])) return std::nullopt;
        steps.push_back({w[k], std::nullopt});
      }
      continue;
    }
    if (w[0] != "export" || w.size() < 2) return std::nullopt;  // `A=1 command`: a command to run
    for (size_t k = 1; k < w.size(); ++k) {
      size_t eq = w[k].find('=');
      if (eq == std::string::npos || !valid_name(w[k].substr(0, eq))) return std::nullopt;
      steps.push_back({w[k].substr(0, eq), w[k].substr(eq + 1)});
    }
  }
  if (steps.empty()) return std::nullopt;
  return steps;
}

Environment apply_fix_steps(Environment env, const std::vector<FixStep>& steps) {
  for (const FixStep& s : steps) {
    if (s.value) env.set(s.name, *s.value);
    else env.unset(s.name);
  }
  return env;
}

std::string fix_line_between(const Environment& from, const Environment& to, const std::vector<std::string>& names) {
  std::vector<std::string> unsets, exports;
  for (const std::string& n : names) {
    std::optional<std::string> a = from.get(n), b = to.get(n);
    if (a == b) continue;
    if (!b) unsets.push_back(n);
    else exports.push_back(n + "=" + shell_word(*b));
  }
  std::string out;
  auto join_words = [](const std::vector<std::string>& w) {
    std::string s;
    for (const std::string& x : w) s += (s.empty() ? "" : " ") + x;
    return s;
  };
  if (!unsets.empty()) out = "unset " + join_words(unsets);
  if (!exports.empty()) out += (out.empty() ? "" : "; ") + std::string("export ") + join_words(exports);
  return out;
}

std::string assignments_line(const std::vector<std::pair<std::string, std::string>>& vars) {
  std::string out;
  for (const auto& [name, value] : vars) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

}  // namespace gpumap
