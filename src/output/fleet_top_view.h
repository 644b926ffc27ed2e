// `gpumap top --prometheus URL`'s screen as a pure function: the fleet's answer (answer/
// fleet_answer.h, as `gpumap fleet` reads it), what the person asked for (sort, filter, which
// nodes are expanded) and a size give the lines to draw.  One row per node (its state, GPUs,
// memory, utilisation, processes, findings); an expanded node shows its GPUs and their processes
// with each one's own cuda:N; the findings by cause below.  The loop (src/top/) paints the lines;
// `top --prometheus URL --once` prints them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "answer/fleet_answer.h"
#include "output/top_view.h"

namespace gpumap {

/// One read of the fleet as the live view keeps it: the last good answer, and whether the last
/// read failed (Prometheus unreachable mid-session: the screen says so and keeps the answer).
struct FleetTopFrame {
  std::shared_ptr<const FleetAnswer> answer;  // the last good answer; null before the first
  int64_t read_unix_ms = 0;                   // when `answer` was read
  std::string error;                          // the last read failed: why ("" when it did not)
  int64_t failed_unix_ms = 0;                 // when it failed
};

/// The node table's columns, in order.
enum class FleetTopColumn { kNode, kState, kGpus, kMemory, kUtil, kProcesses, kFindings };

/// What the person sees and has asked for (changed by top/top_keys.h's fleet_top_key).
struct FleetTopView {
  enum class Screen { kMain, kHelp };
  Screen screen = Screen::kMain;
  FleetTopColumn sort = FleetTopColumn::kNode;
  bool reverse = false;
  std::string filter;              // node:TEXT, user:NAME, job:ID, gpu:TEXT, else text in a node, user or command
  std::set<std::string> expanded;  // instances whose GPUs and processes are shown
  bool paused = false;
  double interval_s = 2.0;         // seconds between reads
  size_t selected = 0;             // position in fleet_top_rows()
  size_t scroll = 0;               // first row shown
  bool filter_prompt = false;      // `/` typed: `typed` is the filter being written
  std::string typed;
  std::string message;             // the last key's outcome, in the footer
  bool utf8 = true;
};

/// One line of the node table: a node, or (expanded) one of its GPUs or one of their processes.
struct FleetTopRow {
  enum class Kind { kNode, kGpu, kProcess } kind = Kind::kNode;
  const FleetNode* node = nullptr;
  const FleetGpu* gpu = nullptr;         // kGpu, kProcess
  const FleetProcess* process = nullptr;  // kProcess
};

/// The rows the table shows for `view` (filter, sort, expanded nodes), in order.
std::vector<FleetTopRow> fleet_top_rows(const FleetTopFrame& frame, const FleetTopView& view);

/// The column --sort NAME names (node, state, gpus, mem, util, procs, findings; any case);
/// nullopt otherwise.
std::optional<FleetTopColumn> fleet_top_column_named(const std::string& name);
std::vector<std::string> fleet_top_column_words();
const char* fleet_top_column_name(FleetTopColumn c);  // its header: "NODE", "GPUS"...

/// Whether `filter` is one the fleet view understands; the error names it and the forms otherwise.
std::optional<std::string> fleet_top_filter_error(const std::string& filter);

/// The whole screen: `height` lines of at most `width` columns (height 0: every line, for
/// `--once`, with every node expanded as the view says).
/// The table shows the rows around the selection (always on screen) and a line with how many are
/// above and below; `window` (when given) gets what it showed, for the keys.
std::vector<TopLine> render_fleet_top(const FleetTopFrame& frame, const FleetTopView& view, const TopStatus& status,
                                      size_t width, size_t height, TableWindow* window = nullptr);

}  // namespace gpumap
