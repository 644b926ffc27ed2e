// Rendering only: tables for people, JSON (the contract) for programs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "findings/severity.h"
#include "model/snapshot.h"
#include "output/json_view.h"
#include "output/style.h"

namespace gpumap {

/// Columns padded to their widest cell; a header row underlined by nothing (nvidia-smi style).
/// Control characters and malformed UTF-8 in cells show as '?' (printable(), as procps does).
/// When `st.fit` and the table is wider than `st.width`: short forms first (UUID prefixes, bus
/// ids without domain 0, names without "NVIDIA "), then one space between columns, then the
/// widest `elastic` columns (by header; empty: any) cut with "…", never below their header.
/// `keep` names one column (COMMAND: what tells rows apart) cut only down to `keep_width`
/// until the others are at their floor; then the `droppable` columns go, in that order, before
/// it is cut further.
struct TableFit {
  std::vector<std::string> elastic;    // the columns that may be cut (empty: any)
  std::vector<std::string> droppable;  // left out, in this order, while the table is too wide
  std::string keep;                    // the column to keep readable ("" : none)
  size_t keep_width = 24;
};
std::string render_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                         const TermStyle& st = term_style(), const std::vector<std::string>& elastic = {});
std::string render_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                         const TermStyle& st, const TableFit& fit);

template <class T>
std::string na(const std::optional<T>& v) {
  if (!v) return "N/A";
  if constexpr (std::is_same_v<T, std::string>) return *v;
  else return std::to_string(*v);
}

/// "  [warning] id (where): message" (wrapped with a hanging indent and the tag coloured as `st`
/// says) and "      fix: ..." (never wrapped: it is pasted).
std::string render_finding(const Finding& f, const std::string& where, const TermStyle& st = term_style());
/// "\nFindings:\n" and each finding; "" for none.
std::string render_findings(const std::vector<Finding>& fs, const TermStyle& st = term_style());

/// "MiB used / total" for tables.
std::string memory_cell(const Gpu& g);
/// The same for a GPU or MIG device by UUID (a MIG device's own memory); "N/A" when unknown.
std::string memory_cell(const Snapshot& s, const std::string& uuid);
/// A GPU's or MIG device's own name ("NVIDIA A100-SXM4-80GB MIG 3g.40gb"); "?" when unknown.
std::string device_name(const Snapshot& s, const std::string& uuid);

/// The first line of table output: what host this is (on a terminal: the host file's name
/// without its folder, wrapped to fit).
std::string host_banner(const Snapshot& s, const TermStyle& st = term_style());

/// One line of prose with its newline, made printable() (it quotes variables, paths, driver
/// strings): when `st.fit`, wrapped at words, its leading spaces kept and continuation lines
/// indented 2 more; else as is.
std::string fit_line(const std::string& line, const TermStyle& st = term_style());
/// fit_line of each line of `text` (prose of several lines: `which`, `pick`, `verify`); an empty
/// line stays empty.  Lines to paste (an export, a docker run) are printed without it: never wrapped.
std::string fit_lines(const std::string& text, const TermStyle& st = term_style());

}  // namespace gpumap
