// gpumap __describe: the command table as data (JSON), or what is generated from it: the man
// page and the bash/zsh/fish completion scripts (the build writes these with it), and the bundled
// host names and this host's GPUs (the completion scripts ask for them).  The table is
// cli/reference.cc's; the renderers are output/manual.h's.
#include <iostream>

#include "cli/command.h"
#include "model/error.h"
#include "output/manual.h"
#include "session/output_file.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  std::string format = args.value("--format").value_or("json");
  if (args.has("--json")) format = "json";
  std::string text;
  if (format == "hosts")
    for (const std::string& h : bundled_hosts(ctx.session().seams())) text += h + "\n";
  else if (format == "gpus")
    text = completion_gpu_words(ctx.session().snapshot());
  else if (std::optional<std::string> t = reference_text(cli_reference(), format))
    text = *t;
  else
    throw Error(kExitUsage, "__describe: --format `" + format + "` is not one of json, man, bash, zsh, fish, hosts, gpus");
  std::optional<std::string> path = args.value("--output");
  if (!path) {
    std::cout << text;
    return kExitOk;
  }
  // Written beside and renamed, so a failed build never leaves half a man page behind.
  write_output_file(*path, text, "__describe --output", "give a writable path");
  return kExitOk;
}

}  // namespace

Command describe_command() {
  return {"__describe",
          "internal: the command table as JSON, man page, or completion script",
          "gpumap __describe [--format json|man|bash|zsh|fish|hosts|gpus] [--output FILE]",
          "Internal.  The build generates the man page and the shell completion from this output; the\n"
          "completion scripts ask it for the bundled host names and the host's GPUs.",
          {{"--format", true, false, "json|man|bash|zsh|fish|hosts|gpus", "what to print (default json)"},
           {"--output", true, false, "FILE", "write it to FILE instead of standard output"}},
          false,
          run,
          true};
}

}  // namespace gpumap
