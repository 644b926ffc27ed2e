#include "cli/command.h"

#include <algorithm>

#include "model/error.h"

namespace gpumap {
namespace {

/// `c` with the exit codes it may end with besides those of every command.
Command exiting(Command c, std::vector<int> codes) {
  c.exit_codes = std::move(codes);
  return c;
}

/// `c`, which refuses --json (it prints a terminal, Prometheus text or serves it), saying to use
/// `instead`: no listing shows it (command_options).
Command without_json(Command c, std::string instead) {
  c.json = false;
  c.json_instead = std::move(instead);
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
      without_json(top_command(), "drop --json; frames for programs: gpumap ps --json --watch 1"),
      explain_command(),
      which_command(),
      exiting(verify_command(), {kExitMismatch, kExitCudaWouldFail}),
      exiting(doctor_command(), {kExitFindings}),
      exiting(pick_command(), {kExitUnavailable}),
      exiting(run_command(), {kExitUnavailable}),
      exiting(bind_command(), {kExitUnavailable}),
      exiting(snapshot_command(), {kExitMismatch}),
      exiting(job_command(), {kExitFindings, kExitPartial}),
      without_json(metrics_command(), "drop --json; for JSON use `gpumap ps --json` or `gpumap list --json`"),
      without_json(serve_command(), "drop --json; for JSON use `gpumap ps --json` or `gpumap list --json`"),
      job_map_command(),
      exiting(fleet_command(), {kExitFindings}),
      describe_command(),
  };
  return table;
}

std::vector<std::string> common_options_refused(const Command& c) {
  std::vector<std::string> out;
  if (!c.json) out.push_back("--json");
  return out;
}

std::vector<OptionSpec> command_options(const Command& c) {
  std::vector<OptionSpec> out = c.options;
  std::vector<std::string> refused = common_options_refused(c);
  for (const OptionSpec& o : common_options())
    if (std::find(refused.begin(), refused.end(), o.name) == refused.end()) out.push_back(o);
  return out;
}

void refuse_untaken_options(const Command& c, const std::vector<std::string>& args) {
  std::vector<std::string> refused = common_options_refused(c);
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") return;
  }
  for (const std::string& a : args) {
    if (a == "--") return;
    if (std::find(refused.begin(), refused.end(), a.substr(0, a.find('='))) != refused.end())
      throw Error(kExitUsage, "gpumap " + std::string(c.name) + " takes no " + a.substr(0, a.find('=')),
                  a.rfind("--json", 0) == 0 && !c.json_instead.empty() ? c.json_instead : "see `gpumap " + std::string(c.name) + " --help`");
  }
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace gpumap
