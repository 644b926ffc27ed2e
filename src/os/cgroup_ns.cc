#include "os/cgroup_ns.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "model/text.h"
#include "os/proc.h"

namespace gpumap {
namespace {

constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC
constexpr size_t kMaxFoldersSearched = 100000;

/// The folder `hierarchy` is mounted at under `cgroup_root` (v2: the root itself or unified/ of a
/// hybrid host, whichever is cgroup2), "" when none.
std::string hierarchy_mount(const std::string& cgroup_root, const std::string& hierarchy) {
  if (!hierarchy.empty()) {
    std::string m = cgroup_root + "/" + (hierarchy.rfind("name=", 0) == 0 ? hierarchy.substr(5) : hierarchy);
    struct stat st {};
    return ::stat(m.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? m : "";
  }
  for (const std::string& m : {cgroup_root, cgroup_root + "/unified"}) {
    struct statfs fs {};
    if (::statfs(m.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == kCgroup2Magic) return m;
  }
  return "";
}

/// The path of `hierarchy`'s line in a /proc/PID/cgroup text.
std::optional<std::string> line_path(const std::string& text, const std::string& hierarchy) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    bool v2 = line.compare(0, a, "0") == 0 && b == a + 1;
    if (hierarchy.empty() ? v2 : line.substr(a + 1, b - a - 1) == hierarchy) return line.substr(b + 1);
  }
  return std::nullopt;
}

bool lists_pid(const std::string& procs_file, uint32_t pid) {
  std::ifstream in(procs_file);
  const std::string want = std::to_string(pid);
  for (std::string line; std::getline(in, line);)
    if (line == want) return true;
  return false;
}

/// The folder `depth` levels below `mount` whose cgroup.procs lists `pid`, breadth first, never
/// through a symbolic link, at most kMaxFoldersSearched folders.
std::optional<std::string> find_pid_folder(const std::string& mount, size_t depth, uint32_t pid) {
  std::vector<std::string> level = {""};
  size_t seen = 0;
  for (size_t d = 0; d < depth; ++d) {
    std::vector<std::string> next;
    for (const std::string& rel : level) {
      DIR* dir = opendir((mount + rel).c_str());
      if (!dir) continue;
      while (dirent* e = readdir(dir)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string child = rel + "/" + name;
        struct stat st {};
        if (::lstat((mount + child).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (++seen > kMaxFoldersSearched) {
          closedir(dir);
          return std::nullopt;
        }
        next.push_back(child);
      }
      closedir(dir);
    }
    level = std::move(next);
  }
  for (const std::string& rel : level)
    if (lists_pid(mount + rel + "/cgroup.procs", pid)) return rel.empty() ? "/" : rel;
  return std::nullopt;
}

}  // namespace

size_t cgroup_path_ups(const std::string& path) {
  size_t n = 0;
  for (size_t at = 0; path.compare(at, 3, "/..") == 0 && (at + 3 == path.size() || path[at + 3] == '/'); at += 3) ++n;
  return n;
}

std::optional<std::string> absolute_cgroup_path(const std::string& path, const std::string& ns_root) {
  if (path.empty() || path[0] != '/' || ns_root.empty() || ns_root[0] != '/') return std::nullopt;
  std::vector<std::string> out;
  for (const std::string& s : split(ns_root, '/'))
    if (!s.empty()) out.push_back(s);
  bool named = false;
  for (const std::string& s : split(path, '/')) {
    if (s.empty() || s == ".") continue;
    if (s == "..") {
      if (named || out.empty()) return std::nullopt;
      out.pop_back();
      continue;
    }
    named = true;
    out.push_back(s);
  }
  std::string abs;
  for (const std::string& s : out) abs += "/" + s;
  return abs.empty() ? "/" : abs;
}

std::optional<std::string> cgroup_namespace_root(const std::string& cgroup_root, const std::string& proc_root,
                                                 const std::string& hierarchy, uint32_t self_pid) {
  static std::mutex m;
  static std::map<std::tuple<std::string, std::string, std::string, uint32_t>, std::optional<std::string>> found;
  std::lock_guard<std::mutex> lock(m);
  auto key = std::make_tuple(cgroup_root, proc_root, hierarchy, self_pid);
  if (auto it = found.find(key); it != found.end()) return it->second;
  std::optional<std::string> root;
  std::ifstream in(proc_root + "/1/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  if (std::optional<std::string> init = line_path(text.str(), hierarchy)) {
    size_t ups = cgroup_path_ups(*init);
    std::string mount = hierarchy_mount(cgroup_root, hierarchy);
    if (ups == 0) root = "/";
    else if (!mount.empty()) root = find_pid_folder(mount, ups, self_pid);
  }
  found[key] = root;
  return root;
}

std::vector<std::optional<uint32_t>> cgroup_path_owners(const std::string& cgroup_root, const std::string& proc_root,
                                                        const std::string& hierarchy, const std::string& path) {
  if (cgroup_path_ups(path) == 0) return cgroup_folder_owners(cgroup_root, hierarchy, path);
  std::optional<std::string> ns_root = cgroup_namespace_root(cgroup_root, proc_root, hierarchy, static_cast<uint32_t>(getpid()));
  std::optional<std::string> abs = ns_root ? absolute_cgroup_path(path, *ns_root) : std::nullopt;
  if (!abs) return {};
  std::vector<std::optional<uint32_t>> owned = cgroup_folder_owners(cgroup_root, hierarchy, *abs);
  if (owned.empty()) return {};
  // Aligned with `path`'s own segments: its named tail is the absolute path's tail.
  std::vector<std::string> segs = split(path, '/');
  std::vector<std::optional<uint32_t>> out(segs.size());
  for (size_t i = segs.size(), j = owned.size(); i-- > 0 && j-- > 0;) {
    if (segs[i] == ".." || segs[i].empty()) break;
    out[i] = owned[j];
  }
  return out;
}

}  // namespace gpumap
