#include "cli/command.h"

#include "model/error.h"

namespace gpumap {
namespace {

/// `c` with the exit codes it may end with besides those of every command.
Command exiting(Command c, std::vector<int> codes) {
  c.exit_codes = std::move(codes);
  return c;
}

/// `c`, which refuses --json (it prints a terminal, Prometheus text or serves it): --help does not list it.
Command without_json(Command c) {
  c.json = false;
  return c;
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      exiting(map_command(), {kExitMismatch}),
      list_command(),
      probe_command(),
      exiting(ps_command(), {kExitFindings}),
      pods_command(),
      without_json(top_command()),
      explain_command(),
      which_command(),
      exiting(verify_command(), {kExitMismatch, kExitCudaWouldFail}),
      exiting(doctor_command(), {kExitFindings}),
      exiting(pick_command(), {kExitUnavailable}),
      exiting(run_command(), {kExitUnavailable}),
      exiting(bind_command(), {kExitUnavailable}),
      exiting(snapshot_command(), {kExitMismatch}),
      exiting(job_command(), {kExitFindings, kExitPartial}),
      without_json(metrics_command()),
      without_json(serve_command()),
      job_map_command(),
      exiting(fleet_command(), {kExitFindings}),
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
