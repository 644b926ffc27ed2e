#include "formats/json.h"

namespace gpumap {

std::string dump(const Json& j, bool one_line) {
  return j.dump(one_line ? -1 : 2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpumap
