// `gpumap serve`'s start-up lines, from its answer (answer/serve_answer.h).
#pragma once
#include <string>

#include "answer/serve_answer.h"

namespace gpumap {

struct ServeStartText {
  std::string out;  // stdout: where it listens (scripts and tests read the URL from it)
  std::string err;  // stderr: a warning when the address is not a loopback one; "" otherwise
};
ServeStartText serve_start_text(const Listening& at);

}  // namespace gpumap
