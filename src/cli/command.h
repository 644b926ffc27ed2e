// The command table: one command per file under src/cli/, listed in commands.cc.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "driver/driver_source.h"
#include "driver/nvml_reader.h"
#include "env/environment.h"
#include "model/snapshot.h"
#include "resolve/mapping.h"

namespace gpumap {

/// What every command gets: the driver to use, the environment to reason about, and
/// the output mode.  The snapshot is read on first use.
class Context {
 public:
  Context(DriverSource driver, Environment env, bool json) : driver_(std::move(driver)), env_(std::move(env)), json_(json) {}
  const DriverSource& driver() const { return driver_; }
  const Environment& env() const { return env_; }
  Environment& env() { return env_; }
  bool json() const { return json_; }
  const Snapshot& snapshot(const ReadOptions& opt = {});
  /// The mapping for `env` (default: the context's), predicted unless probe.
  Mapping mapping(const Environment& env, bool probe);
  Mapping mapping(bool probe = false) { return mapping(env_, probe); }
  /// A DriverAsk bound to this context's driver.
  DriverAsk driver_ask() const;

 private:
  DriverSource driver_;
  Environment env_;
  bool json_;
  std::unique_ptr<Snapshot> snapshot_;
};

struct Command {
  const char* name;
  const char* summary;
  const char* usage;        // "gpumap map [--json] [--env NAME=VALUE]..."
  const char* description;  // what it does, exit codes that differ from the defaults
  std::vector<OptionSpec> options;  // besides common_options()
  bool positionals = false;
  int (*run)(const Args& args, Context& ctx);
  bool hidden = false;
};

const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

// One per file.
Command list_command();
Command map_command();
Command probe_command();
Command ps_command();
Command explain_command();
Command which_command();
Command verify_command();
Command doctor_command();
Command pick_command();
Command run_command();
Command bind_command();

/// Applies --env NAME=VALUE and --unset NAME to a copy of `base`; Error(kExitUsage) on a bad pair.
Environment apply_env_options(const Environment& base, const Args& args);
std::vector<OptionSpec> env_options();
/// --probe: ask the driver (cuInit in a child process) instead of predicting.
OptionSpec probe_option();

}  // namespace gpumap
