// Files a command writes where the user says (--json-file, __describe --output): through the one
// safe writer (os/state_file.h), so a front end never opens a path itself.
#pragma once
#include <string>

namespace gpumap {

/// Writes `text` to `path` atomically (temporary file and rename; a device node, FIFO, symbolic
/// link or folder at `path` is refused, never replaced).  Error(kExitError) "cannot write
/// `option` PATH: why", with `hint` as the fix.
void write_output_file(const std::string& path, const std::string& text, const std::string& option,
                       const std::string& hint);

}  // namespace gpumap
