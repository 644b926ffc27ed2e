// The long descriptions (`gpumap CMD --help`, the man page) of commands whose text outgrew their
// file: a table beside the commands, so a cmd_*.cc holds its logic and its options.
#pragma once

/// Where `gpumap serve` listens unless --listen says otherwise.
#define GPUMAP_DEFAULT_LISTEN "127.0.0.1:9467"

namespace gpumap {

/// The description of `name` ("serve", "ps"); nullptr for a command not in the table.
const char* command_description(const char* name);

}  // namespace gpumap
