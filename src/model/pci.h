// PCI bus ids: the second identity key of a GPU (after the UUID).
// NVML writes "00000000:3B:00.0", CUDA "0000:3b:00.0", sysfs lower case;
// compare them parsed, never as strings, and never truncate the domain.
#pragma once
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpumap {

struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t function = 0;
  auto operator<=>(const PciAddress&) const = default;
};

/// Parses "DDDDDDDD:BB:DD.F", "DDDD:BB:DD.F" or "BB:DD.F" (domain 0), any case.
/// Returns nullopt when the text is not a PCI address.
std::optional<PciAddress> parse_pci_address(std::string_view text);

/// NVML's form: 8-digit domain, upper-case hex ("00000000:3B:00.0").
std::string format_pci_nvml(const PciAddress& a);

}  // namespace gpumap
