// gpumap: which physical GPU your code will run on.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "resolve/gpu_selector.h"
#include "model/error.h"
#include "model/text.h"
#include "os/subprocess.h"

using namespace gpumap;

namespace {

/// The seams of the gpumap binary: from its environment, with the probe child being itself.
Seams cli_seams(const Environment& env, const std::optional<std::string>& simulate) {
  Seams seams = seams_from_environment(env, exe_dir(), simulate);
  seams.probe_command = {self_exe(), "__probe"};
  return seams;
}

void print_main_help() {
  std::string s =
      "gpumap " GPUMAP_VERSION " - which physical GPU your code will run on, and how to make it the one you meant\n\n"
      "usage: gpumap [COMMAND] [OPTIONS]      (no command: `gpumap map`)\n\ncommands:\n";
  for (const Command& c : commands()) {
    if (c.hidden) continue;
    std::string n = std::string("  ") + c.name;
    n.resize(12, ' ');
    s += n + c.summary + "\n";
  }
  s += "\ncommon options:\n" + format_options(common_options()) +
       "  --version               print the version\n\n"
       "Every command reads the real driver (libnvidia-ml.so.1, libcuda.so.1) unless --simulate names a\n"
       "simulated host: " + bundled_host_names(cli_seams(Environment::current(), std::nullopt)) + ", or a JSON file (docs/host-file.md).\n"
       "Exit codes: 0 ok, 1 driver/OS error, 2 usage, 3 no driver, 4 verify mismatch or snapshot differs,\n"
       "5 CUDA would fail, "
       "6 not enough GPUs, 7 doctor found errors (docs/cli.md).\n";
  std::fputs(s.c_str(), stdout);
}

void print_command_help(const Command& c) {
  std::vector<OptionSpec> opts = c.options;
  for (const OptionSpec& o : common_options()) opts.push_back(o);
  std::string s = std::string("usage: ") + c.usage + "\n\n" + c.description + "\n\noptions:\n" + format_options(opts);
  std::fputs(s.c_str(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const Command* cmd = nullptr;
  try {
    if (!args.empty() && (args[0] == "--version" || args[0] == "-V")) {
      std::puts("gpumap " GPUMAP_VERSION);
      return kExitOk;
    }
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
      if (args.size() > 1 && args[0] == "help" && find_command(args[1])) print_command_help(*find_command(args[1]));
      else print_main_help();
      return kExitOk;
    }
    if (args.empty() || args[0].rfind("-", 0) == 0 || parse_cuda_ordinal(args[0])) {
      cmd = find_command("map");
    } else {
      cmd = find_command(args[0]);
      if (!cmd)
        throw Error(kExitUsage, "gpumap: unknown command `" + args[0] + "`", "run `gpumap --help` for the list");
      args.erase(args.begin());
    }
    std::vector<OptionSpec> opts = cmd->options;
    for (const OptionSpec& o : common_options()) opts.push_back(o);
    Args parsed(cmd->name, opts, args, cmd->positionals);
    if (parsed.has("--help")) {
      print_command_help(*cmd);
      return kExitOk;
    }
    Environment env = Environment::current();
    Seams seams = cli_seams(env, parsed.value("--simulate"));
    Context ctx(select_driver(seams), env, parsed.has("--json"), seams);
    std::cout.flush();
    return cmd->run(parsed, ctx);
  } catch (const Error& e) {
    std::cout.flush();
    // Messages quote inputs (arguments, variables, lease records): print them defanged.
    std::fprintf(stderr, "gpumap: error: %s\n", printable(e.what()).c_str());
    if (!e.hint().empty()) std::fprintf(stderr, "  hint: %s\n", printable(e.hint()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "gpumap: internal error: %s\n", printable(e.what()).c_str());
    return kExitError;
  }
}
