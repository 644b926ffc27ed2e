#include "json_contract.h"

#include <fstream>

namespace gpumap::testing {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

Contract read_contract() {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/cli.md");
  Contract c;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("<!-- contract:begin -->") != std::string::npos) inside = true;
    else if (line.find("<!-- contract:end -->") != std::string::npos) inside = false;
    else if (inside && line.rfind("| ", 0) == 0 && line.find("`") != std::string::npos) {
      // Split on cells; "\|" inside a type is a union bar, not a cell border.
      std::vector<std::string> cells;
      std::string cur;
      for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') cur += line[++i];
        else if (line[i] == '|') cells.push_back(trim(cur)), cur.clear();
        else cur += line[i];
      }
      if (cells.size() < 3) continue;
      Key k;
      k.name = cells[1].substr(1, cells[1].size() - 2);  // `key`
      k.type = cells[2];
      if (!k.type.empty() && k.type.back() == '?') k.optional = true, k.type.pop_back();
      c[cells[0]].push_back(k);
    }
  }
  return c;
}

}  // namespace gpumap::testing
