// The JSON contract of docs/cli.md (the rows between its contract markers: | object | `key` |
// type | meaning |) and a checker of documents against it, for every test that reads a command's
// --json (tests/cli_json_contract_test.cc; tests/kube/pods_cases.cc for `pods`, which needs a kubelet).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumap::testing {

struct Key {
  std::string name, type;
  bool optional = false;
};
using Contract = std::map<std::string, std::vector<Key>>;

/// The rows between the contract markers of docs/cli.md.
Contract read_contract();

class Checker {
 public:
  explicit Checker(Contract c) : c_(std::move(c)) {}

  /// Errors, one per line; empty when `v` matches `type`.
  std::string check(const nlohmann::ordered_json& v, const std::string& type, const std::string& path) {
    std::string errors;
    size_t start = 0;
    for (;;) {  // a union: any alternative may match
      size_t bar = type.find('|', start);
      std::string alt = type.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      std::string e = check_one(v, alt, path);
      if (e.empty()) return "";
      errors += e;
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    return errors;
  }

  const std::set<std::string>& checked() const { return checked_; }
  const Contract& contract() const { return c_; }

 private:
  std::string check_one(const nlohmann::ordered_json& v, const std::string& t, const std::string& path) {
    auto bad = [&](const std::string& what) { return path + ": want " + what + ", got " + v.dump() + "\n"; };
    if (t.size() > 2 && t.substr(t.size() - 2) == "[]") {
      if (!v.is_array()) return bad(t);
      std::string e;
      for (size_t i = 0; i < v.size(); ++i) e += check(v[i], t.substr(0, t.size() - 2), path + "[" + std::to_string(i) + "]");
      return e;
    }
    if (t == "null") return v.is_null() ? "" : bad(t);
    if (t == "bool") return v.is_boolean() ? "" : bad(t);
    if (t == "int") return v.is_number_integer() ? "" : bad(t);
    if (t == "number") return v.is_number() ? "" : bad(t);
    if (t == "string") return v.is_string() ? "" : bad(t);
    if (t == "object") return v.is_object() ? "" : bad(t);
    if (!c_.count(t)) return path + ": type `" + t + "` is not in the contract table\n";
    if (!v.is_object()) return bad(t);
    checked_.insert(t);
    std::vector<Key> keys = expand(t);
    std::string e;
    std::set<std::string> known;
    for (const Key& k : keys) {
      known.insert(k.name);
      if (!v.contains(k.name)) {
        if (!k.optional) e += path + "." + k.name + ": missing (" + t + ")\n";
      } else {
        e += check(v[k.name], k.type, path + "." + k.name);
      }
    }
    for (const auto& [name, _] : v.items())
      if (!known.count(name)) e += path + "." + name + ": not in the contract for `" + t + "`\n";
    return e;
  }

  std::vector<Key> expand(const std::string& t) {
    std::vector<Key> out;
    for (const Key& k : c_.at(t)) {
      if (k.name == "*") {
        checked_.insert(k.type);
        for (const Key& inner : expand(k.type)) out.push_back(inner);
      } else {
        out.push_back(k);
      }
    }
    return out;
  }

  Contract c_;
  std::set<std::string> checked_;
};

}  // namespace gpumap::testing
