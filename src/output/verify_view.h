// `gpumap verify --expect`'s answer (answer/verify_answer.h) as JSON and as prose.  The library's
// JSON of the same answer is output/self_view.h's verify_answer_json.
#pragma once
#include <string>

#include "answer/verify_answer.h"
#include "formats/json.h"
#include "output/style.h"

namespace gpumap {

/// "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=..." (the answer's fix as `export` takes it).
std::string fix_assignments(const VerifyAnswer& a);

/// The document, then {ok, prefix, expected (cuda devices), cuda (mapping_json), differences,
/// fix ({NAME: value} | null)}.
Json verify_json(const VerifyAnswer& a);

/// "OK: cuda:0 = ..., ..." (and how many more are visible with the prefix option), or
/// "MISMATCH:" / "FAIL (CUDA would not initialise):" with each difference and the fix line.
/// --expect values and UUIDs are quoted: printed printable, the prose fitted to the terminal;
/// the fix line is never wrapped (it is pasted).
std::string verify_text(const VerifyAnswer& a, const TermStyle& st = term_style());

/// The answer in the form asked: the JSON document (--json) or the prose.
std::string render_verify(const VerifyAnswer& a, bool json);

}  // namespace gpumap
