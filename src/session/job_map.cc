#include "session/job_map.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "model/error.h"
#include "model/text.h"
#include "model/uuid.h"
#include "os/state_file.h"

namespace gpumap {
namespace {


/// A number's digits without leading zeros ("007" -> "7", "0" -> "0"): compared as text, so no
/// value is too long to read.
std::string without_leading_zeros(const std::string& digits) {
  size_t first = digits.find_first_not_of('0');
  return first == std::string::npos ? "0" : digits.substr(first);
}

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
        if (g.minor_number && std::to_string(*g.minor_number) == without_leading_zeros(entry)) hit = &g;
      if (!hit)
        throw Error(kExitUsage, "job-map: no GPU has minor number " + printable(entry) + " (/dev/nvidia" + printable(entry) + ")",
                    "give the allocation as Slurm's GPU ids (SLURM_JOB_GPUS) or as UUIDs: --gpus GPU-...,GPU-...");
      file = gpu_name(*hit, naming, entry);
    } else {
      std::vector<Snapshot::DeviceRef> hits = by_uuid(s, entry);
      if (hits.size() != 1)
        throw Error(kExitUsage,
                    "job-map: `" + printable(entry) + "` " + (hits.empty() ? "names no GPU or MIG device here" : "names several devices"),
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

std::vector<std::string> job_map_minor_notes(const Snapshot& s, const std::string& allocation, JobMapNaming naming) {
  std::vector<std::string> notes;
  std::stringstream in(allocation);
  for (std::string entry; std::getline(in, entry, ',');) {
    entry = trim(entry);
    if (!all_digits(entry)) continue;
    for (const Gpu& g : s.gpus) {
      if (!g.minor_number || std::to_string(*g.minor_number) != without_leading_zeros(entry) || *g.minor_number == g.nvml_index)
        continue;
      std::string idx = std::to_string(g.nvml_index);
      notes.push_back("Slurm's GPU id " + entry + " is /dev/nvidia" + std::to_string(*g.minor_number) + ", which is nvidia-smi GPU " +
                      idx + " on this host (minor numbers differ from NVML indices): " +
                      (naming == JobMapNaming::kNvmlIndex
                           ? "its file is " + idx + ", dcgm-exporter's gpu label"
                           : "its file is " + std::to_string(*g.minor_number) +
                                 " as --name-by minor asks, but dcgm-exporter's gpu label for it is " + idx));
    }
  }
  return notes;
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

std::string job_id_problem(const std::string& job_id) {
  // Slurm's job ids: SLURM_JOB_ID is a number; an array task may be written JOB_TASK
  // (SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID) and a heterogeneous job's component JOB+N, as
  // squeue and sacct print them.  Nothing else: a space, a newline or an escape code in a file
  // dcgm-exporter turns into a label value would be a second job, or reach a terminal.
  size_t i = 0;
  while (i < job_id.size() && job_id[i] >= '0' && job_id[i] <= '9') ++i;
  if (i == 0 || i > 20) return "is not a Slurm job id";
  if (i == job_id.size()) return "";
  if (job_id[i] != '_' && job_id[i] != '+') return "is not a Slurm job id";
  size_t j = i + 1;
  while (j < job_id.size() && job_id[j] >= '0' && job_id[j] <= '9') ++j;
  if (j == i + 1 || j != job_id.size() || j - i - 1 > 10) return "is not a Slurm job id";
  return "";
}

namespace {

/// Why the mapping folder is not safe for root to write in ("" when it is): as the lease folder is
/// judged (src/os/lease.cc), a real folder (not a link), owned by root or this user; and, since
/// dcgm-exporter trusts every file in it, writable by nobody else (sticky or not: another user
/// could plant a file naming any job).
std::string folder_problem(const std::string& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link (refusing to follow it)";
  if (!S_ISDIR(st.st_mode)) return "it is " + file_kind(st.st_mode) + ", not a folder";
  if (st.st_uid != 0 && st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + " (not root or this user)";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string("it is writable by ") + (st.st_mode & S_IWOTH ? "everyone" : "its group") +
           " (anyone of them could plant a mapping file)";
  return "";
}

/// Opens (creating) the folder's lock: never through a link, only a regular file with one link.
int open_lock(const std::string& path, std::string& why) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    struct stat lst {};
    if (lstat(path.c_str(), &lst) == 0 && !S_ISREG(lst.st_mode))
      why = path + " is " + file_kind(lst.st_mode) + ", not the lock file (refusing to use it; remove it)";
    else
      why = "cannot open the lock " + path + ": " + std::strerror(err);
    errno = err;
    return -1;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    why = path + (S_ISREG(st.st_mode) ? " has " + std::to_string(st.st_nlink) + " hard links (a planted link to another file?)"
                                      : " is " + file_kind(st.st_mode) + ", not the lock file") +
          "; remove it";
    close(fd);
    return -1;
  }
  return fd;
}

/// Gives the file just written at `path` the group `gid` of the file it replaced (and its mode
/// again: chown may clear set-id bits); best effort, only root or a member of the group can.
bool keep_group(const std::string& path, gid_t gid, mode_t mode) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  bool kept = fchown(fd, static_cast<uid_t>(-1), gid) == 0 && fchmod(fd, mode) == 0;
  close(fd);
  return kept;
}

}  // namespace

JobMapResult update_job_map(const std::string& dir, const std::vector<std::string>& files, const std::string& job_id,
                            bool add) {
  if (std::string p = job_id_problem(job_id); !p.empty())
    throw Error(kExitUsage, "job-map: job id `" + printable(job_id) + "` " + p,
                "give --job as Slurm writes it (SLURM_JOB_ID): digits, optionally _TASK (array) or +N (heterogeneous)");
  if (add) {
    std::string err = make_dirs(dir, 0755);
    if (!err.empty()) throw Error(kExitError, "job-map: cannot create " + dir + ": " + err, "give a folder root may write (--dir)");
  }
  JobMapResult result;
  struct stat dst {};
  if (!add && lstat(dir.c_str(), &dst) != 0 && errno == ENOENT) return result;  // no folder: nothing to remove
  if (std::string p = folder_problem(dir); !p.empty())
    throw Error(kExitError, "job-map: the folder " + dir + " is unsafe: " + p,
                "give a folder only root can write, e.g. --dir /run/dcgm-job-map (mkdir -m 0755; chown root)");
  std::string why;
  int lock = open_lock(dir + "/.gpumap-job-map.lock", why);
  if (lock < 0) throw Error(kExitError, "job-map: " + why, "give a folder root may write (--dir)");
  flock(lock, LOCK_EX);
  try {
    for (const std::string& f : files) {
      std::string path = dir + "/" + f;
      auto skip = [&](const std::string& reason, bool failed = false) { result.skipped.push_back({f, reason, failed}); };
      // A regular file only, never followed, never opened if it is a FIFO or a device.
      FileText old = read_small_file(path, kMaxJobMapFileBytes, false);
      if (!old.not_regular.empty()) {
        skip(path + " is " + old.not_regular + ", not a mapping file: left alone");
        continue;
      }
      if (old.error == EISDIR) {
        skip(path + " is a folder, not a mapping file: left alone");
        continue;
      }
      if (old.too_big) {
        skip(path + " is larger than " + std::to_string(kMaxJobMapFileBytes >> 20) +
             " MiB, not a mapping file gpumap wrote: left alone");
        continue;
      }
      if (old.error && old.error != ENOENT) {
        skip("cannot read " + path + ": " + std::strerror(old.error), true);
        continue;
      }
      mode_t mode = 0644;  // a new file: dcgm-exporter may run as another user
      gid_t gid = static_cast<gid_t>(-1);
      if (!old.error) {
        struct stat st {};
        if (lstat(path.c_str(), &st) == 0 && st.st_uid != geteuid()) {
          skip(path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user: left alone");
          continue;
        }
        // Another name of the same file (a hard link planted to a 0600 file) would have its lines
        // copied into a new, readable file: never a mapping file gpumap wrote, so left alone.
        if (st.st_nlink > 1) {
          skip(path + " has " + std::to_string(st.st_nlink) +
               " hard links (another name of the same file), not a mapping file gpumap wrote: left alone");
          continue;
        }
        mode = st.st_mode & 07777;  // the admin's mode (0600, 0640) is kept, never widened to 0644
        if (st.st_gid != getegid()) gid = st.st_gid;
      }
      std::vector<std::string> jobs;
      std::stringstream in(old.text);
      std::string line;
      while (std::getline(in, line))
        if (!trim(line).empty() && trim(line) != job_id) jobs.push_back(trim(line));
      if (add) jobs.push_back(job_id);
      if (jobs.empty()) {
        if (unlink(path.c_str()) != 0 && errno != ENOENT) skip("cannot remove " + path + ": " + std::strerror(errno), true);
        else result.changed.push_back(f);
        continue;
      }
      std::string text;
      for (const std::string& j : jobs) text += j + "\n";
      if (std::string err = write_file_atomically(path, text, mode); !err.empty()) {
        skip(err, err.find("not replacing it") == std::string::npos);
        continue;
      }
      if (gid != static_cast<gid_t>(-1)) keep_group(path, gid, mode);  // its group too (the new file got this process's)
      result.changed.push_back(f);
    }
  } catch (...) {
    close(lock);
    throw;
  }
  close(lock);
  return result;
}

JobMapAnswer job_map(Session& session, const JobMapRequest& request) {
  const Environment& env = session.env();
  JobMapAnswer a;
  a.prolog = request.prolog;
  std::optional<std::string> dir = request.dir ? request.dir : env.get("DCGM_HPC_JOB_MAPPING_DIR");
  if (!dir || dir->empty())
    throw Error(kExitUsage, "job-map: no folder: neither --dir nor DCGM_HPC_JOB_MAPPING_DIR is set",
                "give dcgm-exporter's --hpc-job-mapping-dir, e.g. --dir /run/dcgm-job-map");
  std::optional<std::string> job = request.job ? request.job : env.get("SLURM_JOB_ID");
  if (!job) throw Error(kExitUsage, "job-map: no job id: neither --job nor SLURM_JOB_ID is set", "give --job JOBID");
  a.dir = *dir;
  a.job_id = *job;
  std::vector<std::string> files;
  if (a.prolog) {
    // The allocation as Slurm names it: its GPU ids or UUIDs.  A task's CUDA_VISIBLE_DEVICES is
    // renumbered under ConstrainDevices, so it is used only where Slurm sets nothing better.
    std::optional<std::string> gpus = request.gpus;
    if (!gpus) gpus = env.get("SLURM_JOB_GPUS");
    if (!gpus) gpus = env.get("CUDA_VISIBLE_DEVICES");
    if (!gpus)
      throw Error(kExitUsage, "job-map --prolog: no allocation: neither --gpus nor SLURM_JOB_GPUS is set",
                  "give --gpus as Slurm's GPU ids or UUIDs (a job without GPUs needs no prolog)");
    if (trim(*gpus).empty() || gpus->find_first_not_of(", \t") == std::string::npos)
      throw Error(kExitUsage, "job-map --prolog: the allocation is empty (--gpus or SLURM_JOB_GPUS names no GPU)",
                  "give --gpus as Slurm's GPU ids or UUIDs (a job without GPUs needs no prolog)");
    const Snapshot& s = session.snapshot({false});
    files = job_map_files(s, *gpus, request.naming);
    a.notes = job_map_minor_notes(s, *gpus, request.naming);
  } else {
    files = job_map_existing_files(a.dir);
  }
  a.done = update_job_map(a.dir, files, a.job_id, a.prolog);
  for (const JobMapResult::Skipped& k : a.done.skipped) a.failed = a.failed || a.prolog || k.failed;
  return a;
}

}  // namespace gpumap
