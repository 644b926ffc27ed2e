#include "driver/driver_source.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model/error.h"

namespace gpumap {
namespace {

bool exists(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

std::string sim_lib_dir(const Seams& seams) {
  for (const std::string& d : seams.sim_lib_dirs)
    if (exists(d + "/libnvidia-ml.so.1")) return d;
  std::string tried;
  for (const std::string& d : seams.sim_lib_dirs) tried += (tried.empty() ? "" : ", ") + d;
  throw Error(kExitUsage, "the simulated driver libraries were not found (looked in " + tried + ")",
              "build the whole project (cmake --build), or point GPUMAP_SIM_LIBDIR at the folder holding "
              "the fake libnvidia-ml.so.1 and libcuda.so.1");
}

std::string absolute(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  return p;
}

}  // namespace

std::vector<std::string> bundled_hosts(const Seams& seams) {
  std::vector<std::string> names;
  for (const std::string& dir : seams.hosts_dirs) {
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
  return names;
}

std::string bundled_host_names(const Seams& seams) {
  std::string out;
  for (const std::string& n : bundled_hosts(seams)) out += (out.empty() ? "" : ", ") + n;
  return out;
}

DriverSource select_driver(const Seams& seams) {
  DriverSource src;
  src.probe_command = seams.probe_command;
  src.sysfs_root = seams.sysfs_root;
  src.trace = seams.trace;
  src.driver_timeout_s = seams.driver_timeout_s;
  const std::optional<std::string>& spec = seams.simulate;
  if (!spec) return src;
  if (spec->empty()) throw Error(kExitUsage, "--simulate needs a host name or file", "e.g. --simulate seed-mixed");
  std::string file;
  if (spec->find('/') != std::string::npos || (spec->size() > 5 && spec->substr(spec->size() - 5) == ".json")) {
    file = *spec;
    if (access(file.c_str(), R_OK) != 0) {
      int err = errno;  // there but unreadable is not "does not exist"
      if (err == ENOENT)
        throw Error(kExitUsage, "--simulate: host file `" + file + "` does not exist",
                    "give the path of a host file (docs/host-file.md), or a bundled host's name");
      throw Error(kExitUsage, "--simulate: host file `" + file + "` cannot be read (" + std::strerror(err) + ")",
                  "make it readable for this user, or give another host file");
    }
  } else {
    for (const std::string& dir : seams.hosts_dirs)
      if (exists(dir + "/" + *spec + ".json")) {
        file = dir + "/" + *spec + ".json";
        break;
      }
    if (file.empty())
      throw Error(kExitUsage, "--simulate: no bundled host named `" + *spec + "`",
                  "bundled hosts: " + bundled_host_names(seams) + "; or give a path to a host file");
  }
  file = absolute(file);
  std::string dir = sim_lib_dir(seams);
  src.simulated = true;
  src.host_file = file;
  src.host_name = *spec;
  src.nvml_library = dir + "/libnvidia-ml.so.1";
  src.cuda_library = dir + "/libcuda.so.1";
  return src;
}

Error driver_timeout_error(const DriverSource& src, const std::string& library, const std::string& what) {
  return driver_timeout_error(src.driver_timeout_s, library, what);
}

Error driver_timeout_error(double timeout_s, const std::string& library, const std::string& what) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout_s);
  return Error(kExitNoDriver, library + " did not answer within " + secs + " s (" + what + ")",
               "check `nvidia-smi` and the kernel log (dmesg) for Xid errors; to wait longer set "
               "GPUMAP_DRIVER_TIMEOUT=SECONDS (0: no limit)");
}

}  // namespace gpumap
