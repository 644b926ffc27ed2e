// What `gpumap run` and `gpumap bind` set up (answer/launch_answer.h), said before the command
// starts: the document (stderr with --json, and --json-file) and the lines for people.
#pragma once
#include <string>
#include <vector>

#include "answer/launch_answer.h"
#include "formats/json.h"

namespace gpumap {

/// "0-7" for bound CPUs, else "not bound (<why>)", as `run` and `bind` print it.
std::string cpu_summary(const LaunchPlan& plan);

/// run's and bind's document: launch_json of the plan, with "command" and "cpus" (null: not bound).
Json launch_document(const Snapshot& s, const LaunchPlan& plan, const std::vector<std::string>& argv);

/// run: the document with "lease" (the lock files' record and its "dir").
Json run_json(const LaunchAnswer& a);
/// "gpumap run: leased N GPU(s) (DIR); VARIABLES (note)\n", each "cuda:N -> GPU ..." line, "  CPUs: ...".
std::string run_text(const LaunchAnswer& a);

/// bind: the document with own_devices, lease (null), local_rank {variable, value}, notes, warnings.
Json bind_json(const BindAnswer& a);
/// "gpumap bind: local rank R (VARIABLE): cuda:0 -> GPU i UUID, ...; CPUs ...; VARIABLES\n" and
/// "gpumap bind: <advice>\n".
std::string bind_text(const BindAnswer& a);
/// "gpumap bind: note: ...\n" for each note, then "gpumap bind: warning: ...\n" for each warning.
std::string bind_messages(const BindAnswer& a);

}  // namespace gpumap
