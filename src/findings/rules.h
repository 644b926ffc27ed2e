// The rules: each trap from the field guides and the measured driver behaviour, as a
// function from (snapshot, environment, mapping) to findings.  Pure: no I/O.
// Every rule id is documented in docs/findings.md and has a test in rules_test.cc.
#pragma once
#include <vector>

#include "env/environment.h"
#include "findings/finding.h"
#include "model/snapshot.h"
#include "resolve/mapping.h"

namespace gpumap {

struct DiagnosisInput {
  const Snapshot& snapshot;
  const Environment& env;
  const Mapping& mapping;
  /// CUDA's base order under FASTEST_FIRST when known (to compare with nvidia-smi's).
  const std::vector<std::string>* fastest_first_order = nullptr;
  bool in_container = false;
};

std::vector<Finding> diagnose(const DiagnosisInput& in);

/// "nvidia-smi GPU 3" for a UUID (or the MIG device "GPU 3 MIG 1"), "unknown GPU <uuid>" otherwise.
std::string describe_uuid(const Snapshot& s, const std::string& uuid);

/// The NVML index of a GPU or of the parent of a MIG device, or -1.
int nvml_index_of(const Snapshot& s, const std::string& uuid);

}  // namespace gpumap
