// Drivers before R570 give a process exactly one MIG device (issue 52 item 5; docs/driver-rules.md,
// "Before R570: one MIG device per process").  Apart from cuda_rules.h, which nearly every file
// includes, so the rule is one small header.  Pure.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/cuda_view.h"

namespace gpumap {

/// Whether a driver of this version ("535.104.05") gives a process exactly one MIG device: before
/// R570; false when the version is unknown.
bool one_mig_device_per_process(const std::optional<std::string>& driver_version);

/// That rule on a view: when some device of v.uuids is a MIG device (`is_mig`), the process gets
/// only the first of them; returns the devices it leaves out (MIG devices and whole GPUs), in list
/// order.  A view without a MIG device, or with an error, is left as it is (nothing returned).
std::vector<std::string> keep_one_mig_device(CudaView& v, const std::function<bool(const std::string&)>& is_mig);

}  // namespace gpumap
