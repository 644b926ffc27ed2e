// The mapping for one environment as a plain value: cuda:N -> physical GPU, with where the
// answer came from.  resolve/resolve_mapping.h computes it (resolve_mapping); findings/ and the
// front ends read it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/cuda_devices.h"
#include "model/cuda_view.h"

namespace gpumap {

struct Mapping {
  CudaView view;           // the answer (from the model, or from the driver with probe)
  std::string source;      // "predicted" | "cache" | "driver"
  std::string order_note;  // how the base order was obtained, in words
  std::optional<double> driver_ms;  // time the driver took, when it was asked
  std::vector<std::string> base_order;  // every CUDA device in the order the setting selects
  std::vector<CudaDevice> driver_devices;  // with probe: what CUDA itself reported, per ordinal
};

}  // namespace gpumap
