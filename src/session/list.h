// `gpumap list` as an operation: the snapshot with leases, outer numbers and, when asked, each
// GPU's cuda:N here (answer/list_answer.h).
#pragma once
#include "answer/list_answer.h"
#include "session/session.h"

namespace gpumap {

struct ListRequest {
  bool cuda_ordinals = false;  // resolve CUDA's view for ListAnswer::cuda_ordinal
  bool leases = true;          // read the lease folder (a CSV that does not show them skips it)
  bool place = true;           // each GPU's outer number (the table and JSON show it; the CSV not)
  bool sensors = true;         // temperature, power, clocks, fan, pstate, ECC (ReadOptions::sensors)
};

/// The session's snapshot and what gpumap adds to it.  Error from read_lease for an unsafe
/// lease folder.
ListAnswer answer_list(Session& session, const ListRequest& request);

}  // namespace gpumap
