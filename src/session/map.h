// `gpumap map` as an operation: which physical GPU each cuda:N is for one environment.
#pragma once
#include <string>
#include <vector>

#include "answer/map_answer.h"
#include "session/session.h"

namespace gpumap {

struct MapRequest {
  bool probe = false;               // the driver's answer instead of the prediction
  bool check = false;               // both, compared (MapAnswer::check)
  std::vector<std::string> asked;   // "cuda:N" specs to answer first
};

/// The whole answer for `env`.  Error(kExitUsage) for --probe with --check or a spec that is not
/// cuda:N; answer_cuda_ordinal's errors for a cuda:N that does not exist.  With check, a
/// prediction from the order cached this boot that the driver contradicts is made again from a
/// freshly asked order (the cache is rewritten).
MapAnswer answer_map(Session& session, const Environment& env, const MapRequest& request);

}  // namespace gpumap
