// verify's answer: are cuda:0, cuda:1, ... exactly the expected physical GPUs, in order?  One type
// for every front end: `gpumap verify` (output/verify_view.h), the C API's gpumap_verify and
// Python's gpumap.verify over it (output/self_view.h).  session/verify.h computes it.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/finding.h"
#include "model/mapping.h"
#include "model/snapshot.h"

namespace gpumap {

/// Why an operation gave no answer: its status (an exit code, model/error.h) and the words of the
/// error object.  `cuda_error`: the CUDA error name when CUDA would fail ("" otherwise).
struct Refusal {
  int code = 0;
  std::string message;
  std::string hint;
  std::string cuda_error;
};

struct VerifyAnswer {
  const Snapshot* snapshot = nullptr;  // the session's (valid while it lives)
  bool live = false;                   // CUDA runs in this process: `mapping` is the driver's own
  bool prefix = false;                 // only cuda:0..n-1 had to match
  std::vector<std::string> expected;   // UUIDs (GPU or MIG device), in the order given
  Mapping mapping;                     // what this environment (or process) gets
  std::vector<std::string> differences;  // one line per difference, in words
  /// The variables to set before CUDA starts, CUDA_DEVICE_ORDER first: CUDA_DEVICE_ORDER=PCI_BUS_ID
  /// when the order is invalid, CUDA_VISIBLE_DEVICES (UUIDs) unless fixing the order alone does.
  /// Empty when ok.
  std::vector<std::pair<std::string, std::string>> fix;
  std::vector<Finding> findings;       // set-too-late (live only)
  /// kExitMismatch or kExitCudaWouldFail: what to do about it (a relaunch command once CUDA runs
  /// in this process).  None when cuda:0.. are the expected GPUs.
  std::optional<Refusal> refusal;
  int code = 0;  // kExitOk, or the refusal's: kExitMismatch or kExitCudaWouldFail
};

}  // namespace gpumap
