#include "os/order_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
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

std::string parent_of(const std::string& dir) {
  size_t slash = dir.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : dir.substr(0, slash);
}

/// Why this user cannot create files in the existing folder `dir` ("" when it can).
std::string not_writable(const std::string& dir) {
  if (access(dir.c_str(), W_OK | X_OK) == 0) return "";
  if (errno == EROFS) return "is on a read-only file system";
  return "is not writable by this user (" + std::string(std::strerror(errno)) + ")";
}

/// Why an existing `dir` may not hold the cache: "" when it is this user's own folder.
std::string unsafe_folder(const std::string& dir, const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) return "is " + file_kind(st.st_mode) + ", not a folder";
  if (st.st_uid != geteuid())
    return "belongs to uid " + std::to_string(st.st_uid) + ", not this user (uid " + std::to_string(geteuid()) +
           "): its orders could be planted";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string("is writable by ") + (st.st_mode & S_IWOTH ? "everyone" : "its group") +
           ": its orders could be planted";
  (void)dir;
  return "";
}

}  // namespace

std::string cache_dir_problem(const std::string& dir) {
  if (dir.empty()) return "";
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    std::string why = unsafe_folder(dir, st);
    if (why.empty()) why = not_writable(dir);
    return why.empty() ? "" : "the cache folder " + dir + " " + why;
  }
  if (errno != ENOENT) return "the cache folder " + dir + " cannot be read (" + std::strerror(errno) + ")";
  // Missing: cache_store makes it, and at most its parent (~/.cache on a fresh account).
  std::string parent = parent_of(dir);
  std::string at = parent;
  if (stat(parent.c_str(), &st) != 0) {
    if (errno != ENOENT) return "the cache folder " + dir + " cannot be made: " + parent + " cannot be read (" + std::strerror(errno) + ")";
    at = parent_of(parent);
    if (stat(at.c_str(), &st) != 0)
      return "the cache folder " + dir + " cannot be made: " + at + " does not exist (gpumap makes the folder and its parent, never a tree)";
  }
  if (!S_ISDIR(st.st_mode)) return "the cache folder " + dir + " cannot be made: " + at + " is " + file_kind(st.st_mode) + ", not a folder";
  if (std::string w = not_writable(at); !w.empty()) return "the cache folder " + dir + " cannot be made: " + at + " " + w;
  return "";
}

std::string cache_dir_fix(const std::string& dir, const std::string& problem) {
  const std::string elsewhere = "export GPUMAP_CACHE_DIR=\"$HOME/.cache/gpumap\" (a folder of your own)";
  if (problem.find("its orders could be planted") != std::string::npos && problem.find("writable by") != std::string::npos)
    return "chmod 700 " + dir + ", or " + elsewhere;
  if (problem.find("read-only") != std::string::npos || problem.find("not writable") != std::string::npos ||
      problem.find("belongs to uid") != std::string::npos || problem.find("not a folder") != std::string::npos)
    return elsewhere + ", or unset GPUMAP_CACHE_DIR";
  return "mkdir -p -m 700 " + dir + ", or " + elsewhere;
}

std::optional<std::vector<std::string>> cache_lookup(const std::string& dir, const OrderCacheKey& key, std::string* problem) {
  if (dir.empty() || key.boot_id.empty()) return std::nullopt;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (std::string why = unsafe_folder(dir, st); !why.empty()) {
      if (problem) *problem = "the cache folder " + dir + " " + why;
      return std::nullopt;  // an order someone else could have written is never trusted
    }
  }
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

std::string cache_store(const std::string& dir, const OrderCacheKey& key, const std::vector<std::string>& order) {
  if (dir.empty() || key.boot_id.empty()) return "";
  // The folder and at most its parent (~/.cache on a fresh account), mode 0700: never a whole
  // tree wherever GPUMAP_CACHE_DIR points.  A cache that cannot be written is not kept, and said.
  if (std::string why = cache_dir_problem(dir); !why.empty()) return why;
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
  std::string err = write_file_atomically(dir + kFile, nlohmann::json{{"format", 1}, {"entries", entries}}.dump(1) + "\n", 0600);
  return err.empty() ? "" : "the cache file in " + dir + " cannot be written: " + err;
}

}  // namespace gpumap
