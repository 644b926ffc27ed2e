// gpumap __probe: the child process that asks the CUDA driver (cuInit + device queries,
// never a context).  Internal: other commands run it with the environment in question.
#include <iostream>

#include "cli/command.h"
#include "driver/cuda_probe.h"
#include "model/error.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  std::cout.flush();
  answer_probe(args.value("--cuda-lib").value_or(ctx.session().driver().cuda_library));
  return 0;
}

}  // namespace

Command probe_command() {
  return {"__probe", "internal: cuInit in this process and list the devices", "gpumap __probe [--cuda-lib PATH]",
          "Internal.  Prints the CUDA driver's device list for this process's environment.",
          {{"--cuda-lib", true, false, "PATH", "the CUDA driver library to load"}}, false, run, true};
}

}  // namespace gpumap
