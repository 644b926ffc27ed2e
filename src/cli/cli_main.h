// The whole command line in one call: what gpumap's main() runs (cli/entry.cc), and what the tests
// run in their own process when a separate one would show nothing more (tests/cli_helpers.h).
#pragma once
#include <string>
#include <vector>

namespace gpumap {

class Environment;

/// `gpumap ARGS` (without argv[0]) with `env` as its environment: parses, runs the command,
/// writes its answer on stdout and errors on stderr, and returns the exit code (stdout checked as
/// the command ends: a write that failed is exit 1).  `program`: the gpumap binary it stands for
/// (its hosts/, sim/ and the probe child `PROGRAM __probe`); "" for this process's own.
int cli_main(const std::vector<std::string>& args, const Environment& env, const std::string& program = "");

}  // namespace gpumap
