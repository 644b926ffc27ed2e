#include "model/uuid.h"

#include <strings.h>

#include <cctype>

namespace gpumap {

std::string uuid_hex(const std::string& uuid) {
  std::string s = uuid;
  if (s.rfind("GPU-", 0) == 0 || s.rfind("MIG-", 0) == 0) s = s.substr(4);
  std::string out;
  for (char c : s)
    if (std::isxdigit(static_cast<unsigned char>(c)))
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

bool same_uuid(const std::string& a, const std::string& b) { return strcasecmp(a.c_str(), b.c_str()) == 0; }

bool uuid_starts_with(const std::string& uuid, const std::string& prefix) {
  return prefix.size() <= uuid.size() && strncasecmp(uuid.c_str(), prefix.c_str(), prefix.size()) == 0;
}

std::string uuid_key(const std::string& uuid) {
  std::string k = uuid;
  for (char& c : k) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return k;
}

bool same_uuid_hex(const std::string& a, const std::string& b) { return uuid_hex(a) == uuid_hex(b); }

}  // namespace gpumap
