// The bounds of every number a user gives gpumap, one table for the command line and the
// library: `pick --gpus 5000` and `gpumap.pin(gpus=5000)` are refused with the same range.
#pragma once

namespace gpumap {

struct NumberBound {
  double min, max;
  bool integer;  // a whole number (the library refuses 1.5 and true)
};

inline constexpr NumberBound kBoundGpus{1, 4096, true};                       // pick/run --gpus, pin(gpus=)
inline constexpr NumberBound kBoundMinFreeMib{0, 1099511627776.0, true};      // 2^40 MiB
inline constexpr NumberBound kBoundMaxUtil{0, 100, true};                     // percent
inline constexpr NumberBound kBoundWaitSeconds{0, 1e7, false};                // about 115 days
inline constexpr NumberBound kBoundGpusPerRank{1, 4096, true};                // bind --gpus-per-rank

}  // namespace gpumap
