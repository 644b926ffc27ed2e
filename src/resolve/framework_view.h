// The framework layer (issue 35): what PyTorch makes of a process's CUDA_VISIBLE_DEVICES, beside
// what the driver makes of it (resolve/cuda_rules.h).  torch.cuda.device_count() does not ask the
// driver first: it parses the variable with its own Python code (`_parse_visible_devices`) and
// counts through NVML (`_device_count_nvml`), and falls back to the driver only when that count is
// negative.  is_available() asks the driver, unless PYTORCH_NVML_BASED_CUDA_CHECK=1 makes it
// `device_count() > 0`.  Measured with torch 2.11.0 on driver 580.159.04 (192 vectors,
// tests/vectors/framework/), the rules are in docs/framework-rules.md.  Pure: values in, values out.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/cuda_view.h"

namespace gpumap {

/// What torch.cuda.device_count() answers (torch 2.11, NVML-based count).
struct TorchView {
  /// The count torch computes itself; nullopt when it raises or defers to the driver.
  std::optional<unsigned> device_count;
  /// `_device_count_nvml()` returned -1 (a first entry starting with `MIG-`): device_count() is
  /// then the driver's count (torch._C._cuda_getDeviceCount()).
  bool defers_to_driver = false;
  /// "ValueError: ..." exactly as torch raises it from device_count() (and from is_available()
  /// with PYTORCH_NVML_BASED_CUDA_CHECK=1, and from every call that checks a device id); "" when
  /// it does not raise.
  std::string raises;
  /// Why the count is what it is, in plain words ("entry 2 `GPU-F4AE` matches no NVML UUID as
  /// written (torch compares case-sensitively): torch stops there").  "" when nothing is notable.
  std::string reason;
};

/// torch's NVML-based view.  `nvml_uuids`: every GPU's UUID as NVML names it, in NVML index
/// order (what torch's `_raw_device_uuid_nvml` reads; their number is `_raw_device_count_nvml`).
/// `cuda_visible_devices`: the variable as the process has it (bytes; not UTF-8 is fine).
/// torch ignores CUDA_DEVICE_ORDER and the driver's length limits.
TorchView predict_torch_view(const std::vector<std::string>& nvml_uuids,
                             const std::optional<std::string>& cuda_visible_devices);

/// The driver's count as torch._C._cuda_getDeviceCount() gives it: 0 when cuInit fails.
unsigned driver_device_count(const CudaView& driver);

/// torch.cuda.device_count() as the process would see it: the torch view's count, or the
/// driver's where torch defers; nullopt when it raises.
std::optional<unsigned> torch_device_count(const TorchView& t, const CudaView& driver);

/// Whether torch's device_count() differs from the driver's count (or raises where the driver
/// answers): the case that puts a model on the CPU, or fails `.to("cuda")` with "Invalid device id".
bool torch_differs_from_driver(const TorchView& t, const CudaView& driver);

}  // namespace gpumap
