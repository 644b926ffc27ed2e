// map --batch: many predictions in one process, one per line of a file (issue 25: the
// differential harness compares thousands of them with the driver).  Each line is a JSON object
// giving CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER:
//
//   {"CUDA_VISIBLE_DEVICES": "1,0", "CUDA_DEVICE_ORDER": null}
//
// A value is a string (set; "" is set-but-empty) or null (unset); a key left out keeps the
// environment's value.  A value that is not UTF-8 (an environment value is any bytes but NUL)
// is written in hex under NAME_hex instead: {"CUDA_VISIBLE_DEVICES_hex": "a031"}.  Blank lines
// are skipped; anything else is a usage error naming the line, found before any prediction.
#pragma once
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "answer/map_answer.h"
#include "session/session.h"

namespace gpumap {

struct BatchCase {
  size_t line = 0;  // 1-based line of the file
  /// Per variable: nullopt = not given (the environment's value stays); a given nullopt = unset.
  std::optional<std::optional<std::string>> cuda_visible_devices, cuda_device_order;
};

/// A line longer than this is refused (naming its number), read no further: an environment value
/// is at most 128 KiB (MAX_ARG_STRLEN), 256 KiB in hex, so two of them fit with room.
inline constexpr size_t kBatchMaxLineBytes = size_t{1} << 20;
/// The cases are all checked before the first answer, so they are held: past this (about three
/// million short lines) the file is refused rather than held.
inline constexpr size_t kBatchMaxHeldBytes = size_t{256} << 20;

/// Reads every line of `in` (named `name` in errors: the file, or "-").  Error(kExitUsage)
/// naming the file and line for a line that is not such an object, an unknown key, a value
/// that is neither a string nor null, bad hex, a NUL byte, or a variable given twice; a line past
/// kBatchMaxLineBytes or cases past kBatchMaxHeldBytes (never read or held whole).
std::vector<BatchCase> read_batch(std::istream& in, const std::string& name);
/// read_batch of the file `path`, or of `stdin_stream` when `path` is "-".  Error(kExitUsage)
/// naming the file when it cannot be opened.
std::vector<BatchCase> read_batch_file(const std::string& path, std::istream& stdin_stream);

/// One line's case as an environment: `base` with the line's values set or unset.
Environment batch_environment(const Environment& base, const BatchCase& c);

/// What `map --batch FILE` was given: the file and the map options it refuses beside it.
struct MapBatchRequest {
  std::string file;                 // "-": `stdin_stream`
  bool probe = false, check = false, line = false;  // --probe, --check, --line (refused: --batch only predicts)
  std::vector<std::string> asked;   // cuda:N arguments (refused: each line is answered whole)
};

/// map --batch as one operation: the whole file is read and checked first (read_batch_file's
/// errors; Error(kExitUsage) for --probe, --check, --line or cuda:N beside it), so a bad line
/// refuses the run before any answer exists; then the answer yields each line's prediction in file
/// order (no cuInit where the prediction is exact; otherwise the driver's base order is asked once
/// and cached, as for `map`).  The answer holds `session` and must not outlive it.
MapBatchAnswer answer_map_batch(Session& session, const Environment& base, const MapBatchRequest& request,
                                std::istream& stdin_stream);

}  // namespace gpumap
