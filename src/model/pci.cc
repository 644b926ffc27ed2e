#include "model/pci.h"

#include <cstdio>

namespace gpumap {
namespace {

// Reads up to max_digits hex digits; returns false when there are none or too many.
bool read_hex(std::string_view& s, size_t max_digits, uint32_t& out) {
  size_t n = 0;
  uint64_t v = 0;
  while (n < s.size()) {
    char c = s[n];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else break;
    v = v * 16 + static_cast<uint64_t>(d);
    ++n;
    if (n > max_digits) return false;
  }
  if (n == 0) return false;
  out = static_cast<uint32_t>(v);
  s.remove_prefix(n);
  return true;
}

bool expect(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

}  // namespace

std::optional<PciAddress> parse_pci_address(std::string_view text) {
  // Count colons to know whether a domain is present.
  size_t colons = 0;
  for (char c : text) colons += (c == ':');
  if (colons != 1 && colons != 2) return std::nullopt;
  PciAddress a;
  std::string_view s = text;
  if (colons == 2 && (!read_hex(s, 8, a.domain) || !expect(s, ':'))) return std::nullopt;
  if (!read_hex(s, 2, a.bus) || !expect(s, ':')) return std::nullopt;
  if (!read_hex(s, 2, a.device) || !expect(s, '.')) return std::nullopt;
  if (!read_hex(s, 1, a.function) || !s.empty()) return std::nullopt;
  if (a.device > 0x1f || a.function > 7) return std::nullopt;
  return a;
}

std::string format_pci_nvml(const PciAddress& a) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function);
  return buf;
}

}  // namespace gpumap
