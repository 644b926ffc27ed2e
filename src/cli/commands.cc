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

/// `c`, which refuses --simulate (it reads no host of its own), saying what to use `instead`.
Command without_simulate(Command c, std::string instead) {
  c.simulate = false;
  c.simulate_instead = std::move(instead);
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
      without_simulate(exiting(fleet_command(), {kExitFindings}),
                       "drop --simulate: fleet reads Prometheus, not a host; to try it without GPUs, let Prometheus "
                       "scrape `gpumap serve --simulate HOST` on each node (docs/fleet.md)"),
      describe_command(),
      exiting(health_command(), {kExitFindings}),
  };
  return table;
}

std::vector<std::string> common_options_refused(const Command& c) {
  std::vector<std::string> out;
  if (!c.json) out.push_back("--json");
  if (!c.simulate) out.push_back("--simulate");
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
    if (std::find(refused.begin(), refused.end(), a.substr(0, a.find('='))) != refused.end()) {
      const std::string name = a.substr(0, a.find('='));
      const std::string instead = name == "--json" ? c.json_instead : name == "--simulate" ? c.simulate_instead : "";
      throw Error(kExitUsage, "gpumap " + std::string(c.name) + " takes no " + name,
                  instead.empty() ? "see `gpumap " + std::string(c.name) + " --help`" : instead);
    }
  }
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace gpumap
