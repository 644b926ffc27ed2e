// gpumap-probe: the child process libgpumap.so runs to ask the CUDA driver (cuInit and device
// queries, never a context) with the environment in question, so cuInit never runs in the
// library user's process.  Same answer and wire format as `gpumap __probe`.
#include <cstdio>
#include <cstring>
#include <string>

#include "driver/cuda_probe.h"
#include "model/error.h"

int main(int argc, char** argv) {
  std::string lib = "libcuda.so.1";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cuda-lib") == 0 && i + 1 < argc) {
      lib = argv[++i];
    } else {
      std::fprintf(stderr, "usage: gpumap-probe [--cuda-lib PATH]   (internal to libgpumap)\n");
      return gpumap::kExitUsage;
    }
  }
  try {
    gpumap::answer_probe(lib);  // on its own channel, like `gpumap __probe`
    return 0;
  } catch (const gpumap::Error& e) {
    std::fprintf(stderr, "gpumap-probe: %s\n", e.what());
    return e.exit_code();
  }
}
