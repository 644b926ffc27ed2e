#include "prom/promql.h"

#include <cstdio>

namespace gpumap {

std::string promql_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes as it is: Prometheus reads strings as UTF-8
        }
    }
  }
  return out + "\"";
}

std::string re2_literal(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (word) {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[12];
      std::snprintf(buf, sizeof buf, "\\x{%02x}", c);  // a byte, not a code point: RE2 reads \x{HH} as U+00HH
      out += c >= 0x80 ? std::string(1, static_cast<char>(c)) : std::string(buf);
    } else {
      out += '\\';
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string label_matcher(const std::string& name, const std::vector<std::string>& values, const std::string& prefix,
                          const std::string& suffix) {
  if (values.empty()) return "";
  std::string alt;
  for (const std::string& v : values) alt += (alt.empty() ? "" : "|") + re2_literal(v);
  return name + "=~" + promql_string(prefix + "(?:" + alt + ")" + suffix);
}

std::string selector(const std::string& metric, const std::vector<std::string>& matchers) {
  std::string inside;
  for (const std::string& m : matchers)
    if (!m.empty()) inside += (inside.empty() ? "" : ",") + m;
  return metric + (inside.empty() ? "" : "{" + inside + "}");
}

}  // namespace gpumap
