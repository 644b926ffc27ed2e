// `gpumap fleet` as people read it (the nodes with their GPUs and processes, then the Slurm jobs
// across nodes, then the findings by cause) and as JSON (the contract in docs/cli.md).
#pragma once
#include <string>

#include "answer/fleet_answer.h"
#include "output/style.h"

namespace gpumap {

std::string fleet_text(const FleetAnswer& a, const TermStyle& st = term_style());
std::string fleet_json(const FleetAnswer& a);

}  // namespace gpumap
