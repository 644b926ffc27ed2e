// `gpumap job-map`'s answer (answer/job_map_answer.h): the warnings and notes for standard error,
// and the result as JSON or one line.
#pragma once
#include <string>

#include "answer/job_map_answer.h"
#include "formats/json.h"

namespace gpumap {

/// "gpumap job-map: warning: ..." for each file left alone, then "gpumap job-map: note: ..." for
/// each note (standard error, printable).
std::string job_map_messages(const JobMapAnswer& a);

/// {job_id, dir, action ("prolog"|"epilog"), files (changed), skipped [{file, reason}], notes}.
Json job_map_json(const JobMapAnswer& a);

/// "gpumap job-map: job J added to DIR/0 DIR/1\n" ("removed from"; "no file" when none changed).
std::string job_map_text(const JobMapAnswer& a);

/// The answer in the form asked: the JSON document (--json) or the text (its messages for stderr:
/// job_map_messages).
std::string render_job_map(const JobMapAnswer& a, bool json);

}  // namespace gpumap
