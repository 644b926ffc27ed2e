// Facts about this boot of this machine, for cache keys.
#pragma once
#include <string>

namespace gpumap {

/// /proc/sys/kernel/random/boot_id, or "" when it cannot be read.
std::string read_boot_id();

}  // namespace gpumap
