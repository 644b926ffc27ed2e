// gpumap __probe: the child process that asks the CUDA driver (cuInit + device queries,
// never a context).  Internal: other commands run it with the environment in question.
#include <fcntl.h>
#include <unistd.h>

#include <iostream>

#include "cli/command.h"
#include "driver/cuda_probe.h"
#include "model/error.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  std::string lib = args.value("--cuda-lib").value_or(ctx.driver().cuda_library);
  // The answer goes out on a channel of its own: stdout as it was at start, kept on a private
  // descriptor.  Descriptor 1 then points at stderr, so whatever the driver library prints
  // cannot pose as (or corrupt) the answer.
  std::cout.flush();
  int answer = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (answer < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw Error(kExitError, "__probe: cannot set up the answer channel");
  std::string text = serialize_probe(probe_in_process(lib));
  std::cout.flush();
  for (size_t off = 0; off < text.size();) {
    ssize_t n = write(answer, text.data() + off, text.size() - off);
    if (n <= 0) return kExitError;
    off += static_cast<size_t>(n);
  }
  close(answer);
  return 0;
}

}  // namespace

Command probe_command() {
  return {"__probe", "internal: cuInit in this process and list the devices", "gpumap __probe [--cuda-lib PATH]",
          "Internal.  Prints the CUDA driver's device list for this process's environment.",
          {{"--cuda-lib", true, false, "PATH", "the CUDA driver library to load"}}, false, run, true};
}

}  // namespace gpumap
