// `gpumap explain`'s answer (answer/explain_answer.h) as JSON and as lines for people.
#pragma once
#include <string>

#include "answer/explain_answer.h"
#include "formats/json.h"
#include "output/style.h"

namespace gpumap {

/// The document, then {environment, explanation (the lines), entries [{position, raw, outcome,
/// cuda_ordinal, uuid, text}], cuda (mapping_json), findings, local_device (null where CUDA would
/// fail)}.
Json explain_json(const Explanation& e);

/// The host banner, each line fitted to the terminal, the result (cuda:N = GPU, "no GPU visible"
/// or how cuInit fails) and the findings; printable (the host file's path, variables and UUIDs
/// come from outside).
std::string explain_text(const Explanation& e, const TermStyle& st = term_style());

/// The explanation in the form asked: the JSON document (--json) or the text.
std::string render_explain(const Explanation& e, bool json);

}  // namespace gpumap
