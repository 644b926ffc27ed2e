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

/// A framework's version as `__version__` writes it ("2.5.1+cu124", "0.10.1.dev3", "1.13.1"): its
/// leading numbers; nullopt when it does not start with one.
struct FrameworkVersion {
  int major = 0, minor = 0, patch = 0;
  bool operator<(const FrameworkVersion& o) const {
    return major != o.major ? major < o.major : minor != o.minor ? minor < o.minor : patch < o.patch;
  }
};
std::optional<FrameworkVersion> parse_framework_version(const std::string& text);

/// Why `framework` ("torch", "vllm") at `version` fails on a CUDA_VISIBLE_DEVICES with UUID entries
/// (issue 52 item 5, docs/framework-rules.md, "Versions"), in words; "" when it reads them, or when
/// the version says nothing known.  `mig_entry`: some entry is a MIG- UUID.
///  - torch before 2.0 parses the variable itself and reads only integers: device_count() is 0
///    (pytorch#90543 on 1.13.0; fixed by pytorch#92315, first released in 2.0.0);
///  - vLLM up to 0.20.1 int()s each entry in Platform.device_id_to_physical_device_id: ValueError
///    at start (vllm#6551, #20939 on 0.9.2, #46132 on 0.10.0, #41848 on 0.20.1; #45026, merged
///    2026-06, stops vLLM reading the variable so).
std::string framework_uuid_failure(const std::string& framework, const std::string& version, bool mig_entry);

}  // namespace gpumap
