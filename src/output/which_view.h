// `gpumap which`'s answer (answer/which_answer.h) as JSON and as prose with the lines to paste.
#pragma once
#include <string>

#include "answer/which_answer.h"
#include "formats/json.h"
#include "output/style.h"

namespace gpumap {

/// The document, then {asked_cuda, devices (each with pci_position), uuid_form, index_form (null
/// when indices cannot say it), docker_run, cuda (mapping_json)}.
Json which_json(const WhichAnswer& a);

/// The cuda:N sentences, how to get exactly these GPUs (by UUID, by index, for a container),
/// and where each is now.  Prose fits the terminal (fit_line: wrapped at words); the lines to
/// paste are never wrapped; both printable (UUIDs and GPU names come from the driver).
std::string which_text(const WhichAnswer& a, const TermStyle& st = term_style());

/// The answer in the form asked: the JSON document (--json) or the lines to paste.
std::string render_which(const WhichAnswer& a, bool json);

}  // namespace gpumap
