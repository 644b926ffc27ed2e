#include "driver/driver_source.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "fake/host_file.h"
#include "model/error.h"

namespace gpumap {
namespace {

std::string exe_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

bool exists(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

std::vector<std::string> hosts_dirs() {
  std::vector<std::string> dirs;
  if (const char* d = getenv("GPUMAP_HOSTS_DIR")) dirs.push_back(d);
  std::string e = exe_dir();
  dirs.push_back(e + "/hosts");
  dirs.push_back(e + "/../share/gpumap/hosts");
  return dirs;
}

std::string sim_lib_dir() {
  if (const char* d = getenv("GPUMAP_SIM_LIBDIR")) return d;
  std::string e = exe_dir();
  for (const std::string& d : {e + "/sim", e + "/../lib/gpumap/sim"})
    if (exists(d + "/libnvidia-ml.so.1")) return d;
  throw Error(kExitUsage, "the simulated driver libraries were not found next to gpumap (" + e + "/sim)",
              "build the whole project (cmake --build), or point GPUMAP_SIM_LIBDIR at the folder holding "
              "the fake libnvidia-ml.so.1 and libcuda.so.1");
}

std::string absolute(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  return p;
}

}  // namespace

std::string bundled_host_names() {
  std::vector<std::string> names;
  for (const std::string& dir : hosts_dirs()) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.substr(n.size() - 5) == ".json") names.push_back(n.substr(0, n.size() - 5));
    }
    closedir(d);
    if (!names.empty()) break;
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

DriverSource select_driver(const std::optional<std::string>& spec_arg) {
  DriverSource src;
  std::optional<std::string> spec = spec_arg;
  if (!spec)
    if (const char* e = getenv("GPUMAP_SIMULATE"); e && *e) spec = e;
  if (!spec) return src;
  if (spec->empty()) throw Error(kExitUsage, "--simulate needs a host name or file", "e.g. --simulate seed-mixed");
  std::string file;
  if (spec->find('/') != std::string::npos || (spec->size() > 5 && spec->substr(spec->size() - 5) == ".json")) {
    file = *spec;
    if (!exists(file)) throw Error(kExitUsage, "--simulate: host file `" + file + "` does not exist");
  } else {
    for (const std::string& dir : hosts_dirs())
      if (exists(dir + "/" + *spec + ".json")) {
        file = dir + "/" + *spec + ".json";
        break;
      }
    if (file.empty())
      throw Error(kExitUsage, "--simulate: no bundled host named `" + *spec + "`",
                  "bundled hosts: " + bundled_host_names() + "; or give a path to a host file");
  }
  file = absolute(file);
  try {
    fake::load_host_file(file);  // check it here, so a bad file gets a clear message
  } catch (const std::exception& e) {
    throw Error(kExitUsage, std::string("--simulate: ") + e.what(), "the format is in docs/host-file.md");
  }
  std::string dir = sim_lib_dir();
  src.simulated = true;
  src.host_file = file;
  src.host_name = *spec;
  src.nvml_library = dir + "/libnvidia-ml.so.1";
  src.cuda_library = dir + "/libcuda.so.1";
  setenv("GPUMAP_FAKE_HOST", file.c_str(), 1);
  return src;
}

}  // namespace gpumap
