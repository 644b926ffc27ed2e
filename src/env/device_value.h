// A device as torch, transformers and accelerate name one in a device_map value or a max_memory
// key: an int (a CUDA ordinal of this process), "cuda:N", "cuda" (cuda:0), or a place that is not
// a GPU ("cpu", "disk", "meta", "mps").  Pure: the one reading of these the C API, the Python
// package (check_device_map, check_max_memory, max_memory) and the diagnosis's findings share.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpumap {

struct DeviceValue {
  std::optional<uint32_t> cuda_ordinal;  // a GPU: cuda:N of this process
  std::string place;                     // not a GPU: "cpu", "disk", "meta" or "mps"
  /// Refused: what a value must be instead ("a cuda ordinal (0 or more)", ...); "" when read.
  std::string expected;
};

/// What every device must be, in words, for messages.
inline constexpr const char* kDeviceWords = "a device: an int (cuda ordinal), 'cuda:N', 'cpu' or 'disk'";

/// An int (Python's, JSON's): an ordinal when 0 or more.
DeviceValue device_value_of_number(int64_t n);
/// Text: "cuda:N" (ASCII digits only, at most 9: Python's str.isdigit() takes '²' and '١'), "cuda",
/// or a place; anything else is refused.  torch.device("cuda:1") prints as "cuda:1".
DeviceValue device_value_of_text(std::string_view text);

/// accelerate refuses "cuda" and "cuda:N" as a max_memory key (measured, accelerate 1.15:
/// ValueError: Device cuda:0 is not recognized, available devices are integers(for GPU/XPU),
/// 'mps', 'cpu' and 'disk').  `shown` is the key as the caller's language writes it ('cuda:1').
struct CudaKeyRefusal {
  std::string message, hint;
};
std::optional<CudaKeyRefusal> cuda_key_refusal(std::string_view text, const std::string& shown);

}  // namespace gpumap
