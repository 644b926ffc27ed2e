#include "session/job_map.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "model/error.h"
#include "model/uuid.h"
#include "os/state_file.h"

namespace gpumap {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

std::string gpu_name(const Gpu& g, JobMapNaming naming, const std::string& entry) {
  if (naming == JobMapNaming::kNvmlIndex) return std::to_string(g.nvml_index);
  if (!g.minor_number)
    throw Error(kExitUsage, "job-map: `" + entry + "`: NVML could not read GPU " + std::to_string(g.nvml_index) + "'s minor number",
                "name the files by NVML index (drop --name-by minor)");
  return std::to_string(*g.minor_number);
}

/// The GPUs and MIG devices whose UUID `entry` names or starts (case-insensitive, without the prefix).
std::vector<Snapshot::DeviceRef> by_uuid(const Snapshot& s, const std::string& entry) {
  std::vector<Snapshot::DeviceRef> out;
  auto starts = [&](const std::string& uuid) {
    return !uuid.empty() && entry.size() <= uuid.size() && same_uuid(uuid.substr(0, entry.size()), entry);
  };
  for (const Gpu& g : s.gpus) {
    if (starts(g.uuid)) out.push_back({&g, nullptr});
    for (const MigDevice& d : g.mig_devices)
      if (starts(d.uuid)) out.push_back({&g, &d});
  }
  return out;
}

}  // namespace

std::vector<std::string> job_map_files(const Snapshot& s, const std::string& allocation, JobMapNaming naming) {
  std::vector<std::string> files;
  std::stringstream in(allocation);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    entry = trim(entry);
    if (entry.empty()) continue;
    std::string file;
    if (all_digits(entry)) {  // Slurm's GPU id: the device minor number (gres.conf File=/dev/nvidia[...])
      const Gpu* hit = nullptr;
      for (const Gpu& g : s.gpus)
        if (g.minor_number && std::to_string(*g.minor_number) == std::to_string(std::stoul(entry))) hit = &g;
      if (!hit)
        throw Error(kExitUsage, "job-map: no GPU has minor number " + entry + " (/dev/nvidia" + entry + ")",
                    "give the allocation as Slurm's GPU ids (SLURM_JOB_GPUS) or as UUIDs: --gpus GPU-...,GPU-...");
      file = gpu_name(*hit, naming, entry);
    } else {
      std::vector<Snapshot::DeviceRef> hits = by_uuid(s, entry);
      if (hits.size() != 1)
        throw Error(kExitUsage,
                    "job-map: `" + entry + "` " + (hits.empty() ? "names no GPU or MIG device here" : "names several devices"),
                    "give full UUIDs as `nvidia-smi -L` prints them, or Slurm's GPU ids (SLURM_JOB_GPUS)");
      file = gpu_name(*hits[0].gpu, naming, entry);
      if (hits[0].mig) {
        if (!hits[0].mig->gpu_instance_id)
          throw Error(kExitUsage, "job-map: `" + entry + "`: NVML could not read its GPU instance id",
                      "give the whole GPU's UUID");
        file += "." + std::to_string(*hits[0].mig->gpu_instance_id);
      }
    }
    if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  }
  return files;
}

std::vector<std::string> job_map_existing_files(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    size_t dot = n.find('.');
    if (all_digits(n.substr(0, dot)) && (dot == std::string::npos || all_digits(n.substr(dot + 1)))) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void update_job_map(const std::string& dir, const std::vector<std::string>& files, const std::string& job_id,
                    bool add) {
  if (job_id.empty() || job_id.find_first_of("\n/") != std::string::npos)
    throw Error(kExitUsage, "job-map: job id `" + job_id + "` is empty or has a newline or /", "give --job JOBID (SLURM_JOB_ID)");
  if (add) {
    std::string err = make_dirs(dir, 0755);
    if (!err.empty()) throw Error(kExitError, "job-map: cannot create " + dir + ": " + err, "give a folder root may write (--dir)");
  }
  int lock = open((dir + "/.gpumap-job-map.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) {
    if (!add && errno == ENOENT) return;  // no folder: nothing to remove
    throw Error(kExitError, "job-map: cannot open the lock in " + dir + ": " + std::strerror(errno), "give a folder root may write (--dir)");
  }
  flock(lock, LOCK_EX);
  try {
    for (const std::string& f : files) {
      std::string path = dir + "/" + f;
      FileText old = read_small_file(path, 1 << 20);
      if (old.error && old.error != ENOENT)
        throw Error(kExitError, "job-map: cannot read " + path + ": " + std::strerror(old.error), "check the folder's permissions");
      std::vector<std::string> jobs;
      std::stringstream in(old.text);
      std::string line;
      while (std::getline(in, line))
        if (!trim(line).empty() && trim(line) != job_id) jobs.push_back(trim(line));
      if (add) jobs.push_back(job_id);
      if (jobs.empty()) {
        if (unlink(path.c_str()) != 0 && errno != ENOENT)
          throw Error(kExitError, "job-map: cannot remove " + path + ": " + std::strerror(errno), "check the folder's permissions");
        continue;
      }
      std::string text;
      for (const std::string& j : jobs) text += j + "\n";
      std::string err = write_file_atomically(path, text, 0644);
      if (!err.empty()) throw Error(kExitError, "job-map: cannot write " + path + ": " + err, "check the folder's permissions");
    }
  } catch (...) {
    close(lock);
    throw;
  }
  close(lock);
}

}  // namespace gpumap
