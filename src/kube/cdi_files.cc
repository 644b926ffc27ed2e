#include "kube/cdi_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <yaml-cpp/yaml.h>

#include "formats/cdi_spec.h"

namespace gpumap {
namespace {

constexpr size_t kMaxSpecBytes = 4u << 20;
constexpr size_t kMaxNodes = 200000;  // a YAML alias bomb expands past this, a real spec never does
constexpr int kMaxDepth = 64;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The file's bytes, or why not: a FIFO or device is never opened for blocking reads.
std::string read_spec(const std::string& path, std::string& error) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = std::string("cannot open it: ") + strerror(errno);
    return "";
  }
  struct stat st {};
  std::string out;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "not a regular file";
  } else if (static_cast<size_t>(st.st_size) > kMaxSpecBytes) {
    error = "larger than 4 MiB (" + std::to_string(st.st_size) + " bytes): not read";
  } else {
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && out.size() <= kMaxSpecBytes) out.append(buf, static_cast<size_t>(n));
    if (n < 0) error = std::string("cannot read it: ") + strerror(errno);
    if (out.size() > kMaxSpecBytes) error = "grew past 4 MiB while read: not read";
  }
  close(fd);
  return error.empty() ? out : "";
}

/// A YAML tree as JSON (scalars as strings: every field gpumap reads is a string).
Json to_json(const YAML::Node& n, size_t& budget, int depth) {
  if (budget == 0 || depth > kMaxDepth) throw std::invalid_argument("nested or aliased past what a CDI spec needs");
  --budget;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = to_json(kv.second, budget, depth + 1);
      return o;
    }
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& v : n) a.push_back(to_json(v, budget, depth + 1));
      return a;
    }
    case YAML::NodeType::Scalar: return n.as<std::string>();
    default: return nullptr;
  }
}

CdiFileRead read_file(const std::string& path, size_t priority) {
  CdiFileRead f{path, priority, {}, ""};
  std::string text = read_spec(path, f.error);
  if (!f.error.empty()) return f;
  try {
    Json doc;
    if (ends_with(path, ".json")) {
      doc = Json::parse(text, nullptr, false);
      if (doc.is_discarded()) throw std::invalid_argument("not valid JSON");
    } else {
      size_t budget = kMaxNodes;
      doc = to_json(YAML::Load(text), budget, 0);
    }
    f.devices = parse_cdi_spec(doc, path);
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    f.error = what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : what;
  } catch (const std::exception& e) {  // YAML::Exception and the like
    f.error = std::string("not valid YAML: ") + e.what();
  }
  return f;
}

}  // namespace

CdiSpecs read_cdi_specs(const std::vector<std::string>& dirs) {
  std::vector<CdiFileRead> files;
  for (size_t i = 0; i < dirs.size(); ++i) {
    DIR* d = opendir(dirs[i].c_str());
    if (!d) {
      if (errno != ENOENT) files.push_back({dirs[i], i, {}, std::string("cannot list the folder: ") + strerror(errno)});
      continue;
    }
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name[0] != '.' && (ends_with(name, ".json") || ends_with(name, ".yaml"))) names.push_back(name);
      if (names.size() > 1024) break;  // a folder of specs, not of everything
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) files.push_back(read_file(dirs[i] + "/" + name, i));
  }
  return merge_cdi_files(dirs, files);
}

}  // namespace gpumap
