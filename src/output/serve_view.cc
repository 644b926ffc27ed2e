#include "output/serve_view.h"

namespace gpumap {

ServeStartText serve_start_text(const Listening& at) {
  ServeStartText t;
  t.out = "gpumap serve: listening on " + at.url + "\n";
  if (!at.loopback)
    t.err = "gpumap serve: " + at.shown +
            " is not a loopback address: whoever reaches this port sees the GPU processes' users and command lines\n";
  return t;
}

}  // namespace gpumap
