#include "env/nvidia_visible_devices.h"

#include <cctype>

#include "model/pci.h"
#include "model/text.h"

namespace gpumap {
namespace {

bool starts_with_ci(const std::string& s, const char* p) {
  for (size_t i = 0; p[i]; ++i)
    if (i >= s.size() || std::toupper(static_cast<unsigned char>(s[i])) != p[i]) return false;
  return true;
}

NvdEntry parse_entry(const std::string& raw) {
  NvdEntry e;
  e.raw = raw;
  std::string s = trim(raw);
  if (s.empty()) {
    e.reason = "empty entry";
    return e;
  }
  if (parse_small_uint(s, e.index)) {
    e.kind = NvdEntryKind::kIndex;
    return e;
  }
  size_t colon = s.find(':');
  if (colon != std::string::npos && s.find(':', colon + 1) == std::string::npos &&
      parse_small_uint(s.substr(0, colon), e.index) && parse_small_uint(s.substr(colon + 1), e.mig_index)) {
    e.kind = NvdEntryKind::kMigIndex;
    return e;
  }
  if (starts_with_ci(s, "GPU-")) {
    e.kind = NvdEntryKind::kUuid;  // full UUIDs only; the toolkit takes no prefixes
    return e;
  }
  if (starts_with_ci(s, "MIG-")) {
    e.kind = NvdEntryKind::kMigUuid;
    return e;
  }
  if (parse_pci_address(s)) {
    e.kind = NvdEntryKind::kPciAddress;
    return e;
  }
  e.reason = "not an index, a GPU-/MIG- UUID, a PCI address or <gpu>:<mig>";
  return e;
}

}  // namespace

NvidiaVisibleDevices parse_nvidia_visible_devices(const std::optional<std::string>& value) {
  NvidiaVisibleDevices out;
  if (!value) return out;
  std::string v = trim(*value);
  if (v.empty() || v == "void") {
    out.mode = NvdMode::kVoid;
    return out;
  }
  if (v == "none") {
    out.mode = NvdMode::kNone;
    return out;
  }
  if (v == "all") {
    out.mode = NvdMode::kAll;
    return out;
  }
  out.mode = NvdMode::kList;
  for (const std::string& e : split(v, ',')) out.entries.push_back(parse_entry(e));
  return out;
}

}  // namespace gpumap
