#include "session/output_file.h"

#include "model/error.h"
#include "os/state_file.h"

namespace gpumap {

void write_output_file(const std::string& path, const std::string& text, const std::string& option,
                       const std::string& hint) {
  if (std::string e = write_file_atomically(path, text, 0644); !e.empty())
    throw Error(kExitError, "cannot write " + option + " " + path + ": " + e, hint);
}

}  // namespace gpumap
