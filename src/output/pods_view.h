// `gpumap pods` as people read it (a table of pods, their allocations and their GPU processes,
// then the findings) and as JSON (the contract in docs/cli.md).
#pragma once
#include <string>

#include "answer/pods_answer.h"
#include "model/snapshot.h"
#include "output/style.h"

namespace gpumap {

std::string pods_text(const Snapshot& s, const PodsAnswer& a, const TermStyle& st = term_style());
std::string pods_json(const Snapshot& s, const PodsAnswer& a);

/// The answer in the form asked: the JSON document (--json) or the table.
std::string render_pods(const Snapshot& s, const PodsAnswer& a, bool json);

}  // namespace gpumap
