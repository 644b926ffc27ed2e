#include "env/device_value.h"

namespace gpumap {

DeviceValue device_value_of_number(int64_t n) {
  DeviceValue v;
  if (n < 0 || n > 999999999) v.expected = "a cuda ordinal (0 or more)";
  else v.cuda_ordinal = static_cast<uint32_t>(n);
  return v;
}

DeviceValue device_value_of_text(std::string_view text) {
  DeviceValue v;
  for (const char* place : {"cpu", "disk", "meta", "mps"})
    if (text == place) {
      v.place = place;
      return v;
    }
  if (text == "cuda") {
    v.cuda_ordinal = 0;
    return v;
  }
  std::string_view digits = text.substr(text.rfind("cuda:", 0) == 0 ? 5 : text.size());
  bool ok = text.rfind("cuda:", 0) == 0 && !digits.empty() && digits.size() <= 9;
  uint32_t n = 0;
  for (char c : digits) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + static_cast<uint32_t>(c - '0');
  }
  if (ok) v.cuda_ordinal = n;
  else v.expected = kDeviceWords;
  return v;
}

std::optional<CudaKeyRefusal> cuda_key_refusal(std::string_view text, const std::string& shown) {
  if (text != "cuda" && text.rfind("cuda:", 0) != 0) return std::nullopt;
  std::string ordinal = text.size() > 5 ? std::string(text.substr(5)) : "0";
  return CudaKeyRefusal{
      "max_memory key " + shown + ": accelerate and transformers refuse it (ValueError: Device " + std::string(text) +
          " is not recognized, available devices are integers(for GPU/XPU), 'mps', 'cpu' and 'disk')",
      "key GPUs by the int CUDA ordinal: {" + ordinal + ": ...} instead of {" + shown +
          ": ...} (gpumap.max_memory() builds the dict from nvidia-smi indices)"};
}

}  // namespace gpumap
