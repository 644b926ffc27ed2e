// Reads the node's CDI spec files (formats/cdi_spec.h) for gpumap-kubelet: every *.json and
// *.yaml file of each folder, YAML through Debian's yaml-cpp (which only this program links).
#pragma once
#include <string>
#include <vector>

#include "model/pod.h"

namespace gpumap {

/// The devices of `dirs` (lowest priority first).  A folder that does not exist is skipped; one
/// that cannot be read, a file that is not a regular file, too large (4 MiB), or not a CDI spec
/// is a problem with its reason.  Never throws.
CdiSpecs read_cdi_specs(const std::vector<std::string>& dirs);

}  // namespace gpumap
