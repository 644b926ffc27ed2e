// gpumap: which physical GPU your code will run on.  main(): the command line of this process
// (cli/main.cc's cli_main), with its environment, read once here.
#include "cli/cli_main.h"
#include "cli/command.h"  // keep_stdout_errors, Environment

int main(int argc, char** argv) {
  gpumap::keep_stdout_errors();
  return gpumap::cli_main(std::vector<std::string>(argv + 1, argv + argc), gpumap::Environment::current());
}
