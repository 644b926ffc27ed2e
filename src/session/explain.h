// explain: entry by entry, what CUDA, the container runtime and the launcher do with the
// variables in force, in plain words, with the consequence.  The words are built here, as
// plain strings; `gpumap explain` only renders them.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "answer/explain_answer.h"
#include "env/environment.h"
#include "env/launcher.h"
#include "findings/severity.h"
#include "model/mapping.h"
#include "model/snapshot.h"
#include "session/session.h"

namespace gpumap {

/// What one CUDA_VISIBLE_DEVICES entry (m.view.entries[i]) does: "entry 2 `1` is read as index 1:
/// it becomes cuda:0 = nvidia-smi GPU 1"; with `host_index` (inside a container, each GPU's host
/// number: resolve/container_view.h host_indices) "... = nvidia-smi GPU 1 (host GPU 3)".
std::string explain_entry(const Snapshot& s, const CudaView& v, size_t i, const std::vector<uint32_t>& host_index = {});

/// The explanation, line by line: CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES and each of its
/// entries (indented), NVIDIA_VISIBLE_DEVICES and its entries, the launchers' variables, MPS.
/// `container`: this process runs in a container (the runtime read NVIDIA_VISIBLE_DEVICES).
std::vector<std::string> explain_lines(const Snapshot& s, const Environment& env, const Mapping& m, bool container);


/// Every rule of findings/rules.h against `env`, whose mapping in this session is `m`: the one
/// environment diagnosis `doctor`, `map`, `explain` and the library share.
std::vector<Finding> environment_findings(Session& session, const Environment& env, const Mapping& m);

/// Explains `env` on the session's host (predicted unless probe).
Explanation explain(Session& session, const Environment& env, bool probe);

}  // namespace gpumap
