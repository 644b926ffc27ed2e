// Facts about this boot of this machine, for cache keys.
#pragma once
#include <string>

namespace gpumap {

/// /proc/sys/kernel/random/boot_id, or "" when it cannot be read.
std::string read_boot_id();

/// The per-user cache folder: $GPUMAP_CACHE_DIR, else $XDG_CACHE_HOME/gpumap, else
/// $HOME/.cache/gpumap.  "" when none can be determined.
std::string cache_dir();

}  // namespace gpumap
