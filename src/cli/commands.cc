#include "cli/command.h"

namespace gpumap {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      map_command(),
      list_command(),
      probe_command(),
      ps_command(),
      explain_command(),
      which_command(),
      verify_command(),
      doctor_command(),
      pick_command(),
      run_command(),
      bind_command(),
      snapshot_command(),
      job_command(),
      metrics_command(),
      serve_command(),
      job_map_command(),
      describe_command(),
  };
  return table;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace gpumap
