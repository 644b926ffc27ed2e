// PCI bus ids: whatever parses formats to text that parses to the same address.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/pci.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto a = gpumap::parse_pci_address(in);
  if (!a) return 0;
  std::string text = gpumap::format_pci_nvml(*a);
  auto b = gpumap::parse_pci_address(text);
  if (!b || *a != *b) abort();
  return 0;
}
