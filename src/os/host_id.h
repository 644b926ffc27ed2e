// Facts about this boot of this machine, for cache keys and mapping snapshots.
#pragma once
#include <string>

namespace gpumap {

/// /proc/sys/kernel/random/boot_id, or "" when it cannot be read.
std::string read_boot_id();

/// This machine's host name (gethostname), or "" when it cannot be read.
std::string read_hostname();

}  // namespace gpumap
