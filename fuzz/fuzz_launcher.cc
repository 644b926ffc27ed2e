// Launcher variables: an Environment built from the fuzz bytes ("NAME=VALUE" lines).
#include <cstdint>
#include <string>
#include <vector>

#include "env/environment.h"
#include "env/launcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= in.size(); ++i)
    if (i == in.size() || in[i] == '\n') {
      lines.push_back(in.substr(start, i - start));
      start = i + 1;
    }
  gpumap::Environment env = gpumap::Environment::from_strings(lines);
  gpumap::LauncherEnv l = gpumap::parse_launcher_env(env);
  (void)l.rank();
  // The raw bytes as a value of every list variable too.
  gpumap::parse_int_list(in);
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "LOCAL_WORLD_SIZE"}) {
    gpumap::Environment one;
    one.set(name, in);
    gpumap::parse_launcher_env(one);
  }
  return 0;
}
