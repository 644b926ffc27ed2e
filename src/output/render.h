// Rendering only: tables for people, JSON (the contract) for programs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "findings/finding.h"
#include "model/snapshot.h"

namespace gpumap {

using Json = nlohmann::ordered_json;

/// Columns padded to their widest cell; a header row underlined by nothing (nvidia-smi style).
/// Control characters and malformed UTF-8 in cells show as '?' (printable(), as procps does).
std::string render_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);

template <class T>
std::string na(const std::optional<T>& v) {
  if (!v) return "N/A";
  if constexpr (std::is_same_v<T, std::string>) return *v;
  else return std::to_string(*v);
}

template <class T>
Json json_or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

/// The list/map per-GPU object: nvml_index, uuid, pci_bus_id, name, memory_*, ...
Json gpu_json(const Gpu& g);
/// The host part every inventory-like command starts with: simulated, source, driver_version,
/// cuda_driver_version and "gpus" (gpu_json of each).
Json snapshot_json(const Snapshot& s);
Json findings_json(const std::vector<Finding>& fs);
std::string render_findings(const std::vector<Finding>& fs);

/// "MiB used / total" for tables.
std::string memory_cell(const Gpu& g);

/// The first line of table output: what host this is.
std::string host_banner(const Snapshot& s);

/// JSON text with a trailing newline.  Never throws on a string that is not UTF-8: each
/// malformed part becomes U+FFFD (valid_utf8() in model/text.h says exactly how).
std::string dump(const Json& j);
/// The same on one line, without the newline.
std::string dump_line(const Json& j);

}  // namespace gpumap
