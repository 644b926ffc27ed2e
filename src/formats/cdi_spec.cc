#include "formats/cdi_spec.h"

#include <map>
#include <stdexcept>

namespace gpumap {
namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// A name made of letters and digits and `extra`, starting with a letter or digit (CDI's rules
/// for vendor, class and device names), at most 255 bytes.
bool cdi_word(const std::string& s, const std::string& extra) {
  if (s.empty() || s.size() > 255 || !alnum(s[0])) return false;
  for (char c : s)
    if (!alnum(c) && extra.find(c) == std::string::npos) return false;
  return true;
}

/// A value from the spec as a message quotes it: a NUL or another control byte as \0 or \xNN, so
/// the message (carried as an exception's what(), a C string) is never cut short at a NUL.
std::string cdi_quoted(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == 0) out += "\\0";
    else if (c < 0x20 || c == 0x7f) out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    else if (c == '"' || c == '\\') out += std::string("\\") + static_cast<char>(c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  throw std::invalid_argument(file + ": " + what);
}

/// The host paths of an edits object's device nodes.
std::vector<std::string> device_nodes(const Json& edits, const std::string& file, const std::string& where) {
  std::vector<std::string> out;
  if (!edits.is_object() || !edits.contains("deviceNodes") || edits["deviceNodes"].is_null()) return out;
  const Json& nodes = edits["deviceNodes"];
  if (!nodes.is_array()) bad(file, where + ": deviceNodes is not a list");
  for (const Json& n : nodes) {
    if (!n.is_object() || !n.contains("path") || !n["path"].is_string() || n["path"].get<std::string>().empty())
      bad(file, where + ": a device node without a path");
    std::string host = n.contains("hostPath") && n["hostPath"].is_string() && !n["hostPath"].get<std::string>().empty()
                           ? n["hostPath"].get<std::string>()
                           : n["path"].get<std::string>();
    out.push_back(host);
  }
  return out;
}

}  // namespace

std::vector<CdiDevice> parse_cdi_spec(const Json& spec, const std::string& file) {
  if (!spec.is_object()) bad(file, "not a CDI spec (not an object)");
  if (!spec.contains("kind") || !spec["kind"].is_string()) bad(file, "no \"kind\" (vendor/class, e.g. nvidia.com/gpu)");
  std::string kind = spec["kind"].get<std::string>();
  size_t slash = kind.find('/');
  if (slash == std::string::npos || !cdi_word(kind.substr(0, slash), ".-") || !cdi_word(kind.substr(slash + 1), "_.-"))
    bad(file, "kind " + cdi_quoted(kind) + " is not vendor/class (e.g. nvidia.com/gpu)");
  if (!spec.contains("devices") || !spec["devices"].is_array()) bad(file, "no \"devices\" list");
  std::vector<std::string> common = spec.contains("containerEdits")
                                        ? device_nodes(spec["containerEdits"], file, "the spec's containerEdits")
                                        : std::vector<std::string>{};
  std::vector<CdiDevice> out;
  for (const Json& d : spec["devices"]) {
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) bad(file, "a device without a name");
    std::string name = d["name"].get<std::string>();
    if (!cdi_word(name, "_.:-")) bad(file, "device name " + cdi_quoted(name) + " has characters CDI does not allow");
    CdiDevice c{kind + "=" + name, {}, file};
    if (d.contains("containerEdits")) c.device_nodes = device_nodes(d["containerEdits"], file, "device " + name);
    c.device_nodes.insert(c.device_nodes.end(), common.begin(), common.end());
    out.push_back(std::move(c));
  }
  return out;
}

CdiSpecs merge_cdi_files(const std::vector<std::string>& dirs, const std::vector<CdiFileRead>& files) {
  CdiSpecs out;
  out.dirs = dirs;
  struct Seen {
    size_t priority;
    CdiDevice device;
    bool conflict = false;
    std::string other;  // the file it conflicts with
  };
  std::map<std::string, Seen> by_name;
  std::vector<std::string> order;  // first appearance
  for (const CdiFileRead& f : files) {
    if (!f.error.empty()) {
      out.problems.push_back({f.file, f.error});
      continue;
    }
    for (const CdiDevice& d : f.devices) {
      auto it = by_name.find(d.name);
      if (it == by_name.end()) {
        by_name.emplace(d.name, Seen{f.priority, d, false, ""});
        order.push_back(d.name);
      } else if (f.priority > it->second.priority) {
        it->second = Seen{f.priority, d, false, ""};
      } else if (f.priority == it->second.priority && f.file != it->second.device.file) {
        it->second.conflict = true;
        it->second.other = f.file;
      }
    }
  }
  for (const std::string& name : order) {
    const Seen& s = by_name.at(name);
    if (s.conflict)
      out.problems.push_back({s.device.file, "device " + name + " is also defined in " + s.other +
                                                 " (the same folder): a runtime refuses it, so gpumap does not use it"});
    else
      out.devices.push_back(s.device);
  }
  return out;
}

}  // namespace gpumap
