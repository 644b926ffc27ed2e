// The two panels of `gpumap top`'s main screen around its GPU lines and process table
// (output/top_view.cc puts them together): the findings, each once per GPU, and the host panel
// (CPU, memory, swap, load, uptime, cores).  Pure: a frame and a size in, styled lines out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "findings/severity.h"
#include "output/top_view.h"

namespace gpumap {

/// One finding as the screen lists it: once per GPU, with the processes it concerns.
struct TopShownFinding {
  Severity severity;
  std::string id;
  uint32_t gpu = 0;
  std::vector<uint32_t> pids;
  std::string message, fix;
};

/// The findings of the rows the filter keeps, as `ps --user/--gpu/--pid` keeps them: each row's
/// own, and the GPU findings a kept row refers to.
std::vector<TopShownFinding> top_shown_findings(const PsResult& ps, const std::string& filter);

/// The findings, each once per GPU, in `lines` lines (the header and "... N more" included):
/// the first line of each, cut at the edge; with no height (--once) each whole, wrapped, with its
/// fix.  The full text and fixes of one process are in the detail view.
void top_findings_lines(std::vector<TopLine>& out, const std::vector<const TopShownFinding*>& shown, size_t hidden_info,
                        size_t finding_lines, size_t height, size_t width);

/// The host panel (CPU, memory, swap, load, uptime; each core from 40 lines): on screens of 30
/// lines or more, folded away below, so 80x24 keeps its rows for processes.
void top_host_panel_lines(std::vector<TopLine>& out, const TopHostPanel& h, const TopView& v, size_t width,
                          size_t height);

}  // namespace gpumap
