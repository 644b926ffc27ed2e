// The measured driver vectors (tests/vectors/*.jsonl): one JSON object per line with the
// environment (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER: a string or null; NAME_hex for bytes that
// are not UTF-8, as tools/difftest writes them) and the driver's answer (error "NAME(code)" or
// null, uuids).  Other keys (ms, predicted, driver_version, host, found_by) are notes.  The first
// line of every file is the baseline, both variables unset: every GPU in the driver's default order.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumap::testing {

struct DriverVector {
  std::optional<std::string> cvd, cdo;
  std::string error;  // "" or "CUDA_ERROR_..."
  std::vector<std::string> uuids;

  std::string label() const {
    return "CUDA_VISIBLE_DEVICES=" + (cvd ? "`" + *cvd + "`" : "<unset>") +
           " CUDA_DEVICE_ORDER=" + (cdo ? "`" + *cdo + "`" : "<unset>");
  }
};

inline std::optional<std::string> vector_value(const nlohmann::json& j, const std::string& name) {
  if (j.contains(name + "_hex")) {
    std::string hex = j[name + "_hex"].get<std::string>(), out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
  }
  if (!j.contains(name) || j[name].is_null()) return std::nullopt;
  return j[name].get<std::string>();
}

inline std::vector<DriverVector> load_vectors(const std::string& path) {
  std::ifstream in(path);
  std::vector<DriverVector> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    DriverVector v;
    v.cvd = vector_value(j, "CUDA_VISIBLE_DEVICES");
    v.cdo = vector_value(j, "CUDA_DEVICE_ORDER");
    if (!j["error"].is_null()) {
      v.error = j["error"].get<std::string>();
      v.error = v.error.substr(0, v.error.find('('));
    }
    v.uuids = j["uuids"].get<std::vector<std::string>>();
    out.push_back(v);
  }
  return out;
}

/// Every tests/vectors/*.jsonl, sorted.
inline std::vector<std::string> vector_files(const std::string& source_dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_dir + "/tests/vectors"))
    if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpumap::testing
