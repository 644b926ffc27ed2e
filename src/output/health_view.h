// `gpumap health` as people read it (each GPU's counters, then each fault with the processes it
// hit and what to do) and as JSON (the contract in docs/cli.md).
#pragma once
#include <string>

#include "answer/health_answer.h"
#include "model/snapshot.h"
#include "output/style.h"

namespace gpumap {

std::string health_text(const Snapshot& s, const HealthAnswer& a, const TermStyle& st = term_style());
std::string health_json(const HealthAnswer& a, bool one_line = false);
/// One fault's process in words: "pid 4179 python3 (user alice) cuda:0, Slurm job 77 rank 1";
/// "pid 4179 (exited; the kernel named it python3)".
std::string fault_process_words(const FaultProcess& p);

}  // namespace gpumap
