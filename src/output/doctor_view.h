// `gpumap doctor`'s answer (answer/doctor_answer.h) as JSON and as text for people.
#pragma once
#include <string>

#include "answer/doctor_answer.h"
#include "formats/json.h"
#include "output/style.h"

namespace gpumap {

/// The document, then {environment, findings, counts {error, warning, info}, combined_fix
/// (string|null), ok, renumbering (string|null)}: docs/cli.md's contract.
Json doctor_json(const DoctorAnswer& a);

/// The host banner, the renumbering line (when cuda:N is not nvidia-smi's GPU N), the findings
/// (or "No traps found", which says the numbering is what it looks like only when it is), the
/// combined fix (never wrapped: it is pasted) and the counts.
std::string doctor_text(const DoctorAnswer& a, const TermStyle& st = term_style());

/// The answer in the form asked: doctor_json dumped, or doctor_text.
std::string render_doctor(const DoctorAnswer& a, bool json);

}  // namespace gpumap
