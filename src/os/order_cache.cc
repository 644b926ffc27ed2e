#include "os/order_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "model/json_bounds.h"
#include "os/state_file.h"

namespace gpumap {
namespace {

constexpr const char* kFile = "/cuda-order-v1.json";
constexpr size_t kMaxEntries = 32;

nlohmann::json read_all(const std::string& dir) {
  // A regular file only, never followed (a FIFO or a device planted there is not opened).
  FileText f = read_small_file(dir + kFile, 1 << 20, false);
  if (f.error || f.too_big) return nlohmann::json::object();
  const std::string& text = f.text;
  if (json_bounds_error(text)) return nlohmann::json::object();  // not one gpumap wrote: start afresh
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array()) return nlohmann::json::object();
  return j;
}

}  // namespace

std::optional<std::vector<std::string>> cache_lookup(const std::string& dir, const OrderCacheKey& key) {
  if (dir.empty() || key.boot_id.empty()) return std::nullopt;
  nlohmann::json j = read_all(dir);
  if (!j.contains("entries")) return std::nullopt;
  std::string k = key.text();
  std::set<std::string> known(key.uuids.begin(), key.uuids.end());
  for (const auto& e : j["entries"]) {
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || e["key"].get<std::string>() != k) continue;
    if (!e.contains("order") || !e["order"].is_array()) return std::nullopt;
    std::vector<std::string> order;
    std::set<std::string> seen;
    for (const auto& u : e["order"]) {
      if (!u.is_string() || !known.count(u.get<std::string>()) || !seen.insert(u.get<std::string>()).second)
        return std::nullopt;  // corrupt or foreign: ignore, it will be rewritten
      order.push_back(u.get<std::string>());
    }
    return order;
  }
  return std::nullopt;
}

void cache_store(const std::string& dir, const OrderCacheKey& key, const std::vector<std::string>& order) {
  if (dir.empty() || key.boot_id.empty()) return;
  // The folder and at most its parent (~/.cache on a fresh account), mode 0700: never a whole
  // tree wherever GPUMAP_CACHE_DIR points.  A cache that cannot be written is just not kept.
  if (size_t slash = dir.find_last_of('/'); slash != std::string::npos && slash > 0)
    mkdir(dir.substr(0, slash).c_str(), 0700);
  mkdir(dir.c_str(), 0700);
  nlohmann::json j = read_all(dir);
  nlohmann::json entries = nlohmann::json::array();
  std::string k = key.text();
  if (j.contains("entries"))
    for (const auto& e : j["entries"])
      if (e.is_object() && e.contains("key") && e["key"] != k && e.contains("boot_id") && e["boot_id"] == key.boot_id)
        entries.push_back(e);  // other keys of this boot stay; older boots go
  while (entries.size() >= kMaxEntries) entries.erase(entries.begin());
  entries.push_back({{"key", k}, {"boot_id", key.boot_id}, {"order", order}});
  // The one safe writer: temporary file and rename, and a non-regular file there is left alone.
  write_file_atomically(dir + kFile, nlohmann::json{{"format", 1}, {"entries", entries}}.dump(1) + "\n", 0600);
}

}  // namespace gpumap
