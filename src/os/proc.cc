#include "os/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <cstdlib>

#include "os/cgroup_ns.h"

namespace gpumap {
namespace {

ProcAccess access_of(int err) {
  if (err == ENOENT || err == ESRCH || err == ENOTDIR) return ProcAccess::kGone;
  if (err == EACCES || err == EPERM) return ProcAccess::kDenied;
  return ProcAccess::kError;
}

/// Reads a (small, /proc-style) file, at most `max_bytes` of it (*truncated: there was more);
/// on failure returns nullopt and sets *err.  The cap is what bounds a hostile process's cost:
/// /proc/PID/cmdline and environ are as long as their owner makes them.
std::optional<std::string> slurp(const std::string& path, int* err, size_t max_bytes = 1 << 20,
                                 bool* truncated = nullptr) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    *err = errno;
    return std::nullopt;
  }
  std::string out;
  char buf[8192];
  if (truncated) *truncated = false;
  for (;;) {
    size_t want = std::min(sizeof buf, max_bytes + 1 - out.size());  // one byte more: is there more?
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      out.resize(max_bytes);
      if (truncated) *truncated = true;
      break;
    }
  }
  ::close(fd);
  return out;
}

std::optional<std::string> line_value(const std::string& text, const char* key) {
  const size_t klen = strlen(key);
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    if (text.compare(p, klen, key) == 0) return text.substr(p + klen, e - p - klen);
    p = e + 1;
  }
  return std::nullopt;
}

std::vector<uint32_t> numbers(const std::string& s, bool* ok) {
  std::vector<uint32_t> out;
  *ok = true;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ' || s[i] == '\t') {
      ++i;
      continue;
    }
    uint64_t v = 0;
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
    if (i == start || v > UINT32_MAX) {
      *ok = false;
      return {};
    }
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

}  // namespace

std::optional<std::vector<uint32_t>> parse_nspid(const std::string& status_text) {
  auto v = line_value(status_text, "NSpid:");
  if (!v) return std::nullopt;
  bool ok = false;
  std::vector<uint32_t> n = numbers(*v, &ok);
  if (!ok || n.empty()) return std::nullopt;
  return n;
}

std::optional<uint32_t> parse_status_uid(const std::string& status_text) {
  return parse_status_number(status_text, "Uid:");
}

std::optional<uint32_t> parse_status_number(const std::string& status_text, const char* key) {
  auto v = line_value(status_text, key);
  if (!v) return std::nullopt;
  bool ok = false;
  std::vector<uint32_t> n = numbers(*v, &ok);
  if (!ok || n.empty()) return std::nullopt;
  return n[0];
}

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\0', p);
    if (e == std::string::npos) e = text.size();
    out.push_back(text.substr(p, e - p));
    p = e + 1;
  }
  return out;
}

ProcFs::ProcFs(std::string root, std::string cgroup_root) : root_(std::move(root)), cgroup_root_(std::move(cgroup_root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  while (cgroup_root_.size() > 1 && cgroup_root_.back() == '/') cgroup_root_.pop_back();
}

std::optional<std::pair<std::string, std::string>> kubepods_cgroup_line(const std::string& text) {
  std::optional<std::pair<std::string, std::string>> v1;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string path = line.substr(b + 1);
    if (path.find("kubepods") == std::string::npos) continue;
    if (line.compare(0, a, "0") == 0 && b == a + 1) return std::make_pair(std::string(), path);
    if (!v1) v1 = std::make_pair(line.substr(a + 1, b - a - 1), path);
  }
  return v1;
}

std::vector<std::optional<uint32_t>> cgroup_folder_owners(const std::string& cgroup_root, const std::string& hierarchy,
                                                          const std::string& path) {
  std::vector<std::optional<uint32_t>> owners;
  if (path.empty() || path[0] != '/' || ("/" + path + "/").find("/../") != std::string::npos) return owners;
  std::vector<std::string> mounts;
  if (hierarchy.empty()) mounts = {cgroup_root, cgroup_root + "/unified"};
  else if (hierarchy.rfind("name=", 0) == 0) mounts = {cgroup_root + "/" + hierarchy.substr(5)};
  else mounts = {cgroup_root + "/" + hierarchy};
  struct stat st {};
  for (const std::string& m : mounts) {
    if (::stat((m + path).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    std::string at = m;
    std::istringstream parts(path);
    for (std::string seg; std::getline(parts, seg, '/');) {
      if (!seg.empty()) at += "/" + seg;
      owners.push_back(::lstat(at.c_str(), &st) == 0 ? std::optional<uint32_t>(st.st_uid) : std::nullopt);
    }
    break;
  }
  return owners;
}

ProcProcess ProcFs::read(uint32_t pid, bool want_environ) const {
  ProcProcess p;
  p.pid = pid;
  std::string dir = root_ + "/" + std::to_string(pid);
  int err = 0;
  auto status = slurp(dir + "/status", &err);
  if (!status) {
    p.access = access_of(err);
    p.environ_access = p.access;
    p.environ_error = strerror(err);
    return p;
  }
  p.uid = parse_status_uid(*status);
  if (std::optional<ProcStat> st = stat(pid)) p.start_ticks = st->start_ticks;
  p.nspid = parse_nspid(*status);
  p.ppid = parse_status_number(*status, "PPid:");
  if (auto state = line_value(*status, "State:")) {  // "\tZ (zombie)"; X: dead, being reaped
    size_t c = state->find_first_not_of(" \t");
    p.zombie = c != std::string::npos && ((*state)[c] == 'Z' || (*state)[c] == 'X');
  }
  if (p.uid) {
    auto it = users_.find(*p.uid);
    if (it == users_.end()) {
      std::string name = std::to_string(*p.uid);
      struct passwd pw, *res = nullptr;
      char buf[4096];
      if (getpwuid_r(*p.uid, &pw, buf, sizeof buf, &res) == 0 && res) name = res->pw_name;
      it = users_.emplace(*p.uid, name).first;
    }
    p.user = it->second;
  }
  bool cut = false;
  if (auto cmd = slurp(dir + "/cmdline", &err, kMaxCmdlineBytes, &cut)) {
    std::string joined;
    p.argv = split_nul(*cmd);
    for (const std::string& a : *p.argv) joined += (joined.empty() ? "" : " ") + a;
    p.command_truncated = cut;
    if (cut) p.argv.reset();  // only its start was read: no relaunch line can be written from it
    if (joined.empty()) {
      if (auto name = line_value(*status, "Name:")) {
        std::string n = *name;
        while (!n.empty() && (n.front() == '\t' || n.front() == ' ')) n.erase(n.begin());
        joined = "[" + n + "]";
      }
    }
    p.command = joined;
  }
  if (want_environ) {
    if (auto env = slurp(dir + "/environ", &err, kMaxEnvironBytes, &cut)) {
      if (cut) {  // the variable the cut ends inside is not whole: drop it rather than misread it
        size_t last = env->rfind('\0');
        env->resize(last == std::string::npos ? 0 : last);
      }
      p.environ = split_nul(*env);
      // A value longer than any real variable's (a 120 kB SLURM_JOB_ID) is kept to its start: it
      // would otherwise be copied into every row, view and finding of every GPU the process uses.
      for (std::string& v : *p.environ)
        if (v.size() > kMaxEnvValueBytes) {
          v.resize(kMaxEnvValueBytes);
          cut = true;
        }
      p.environ_truncated = cut;
      p.environ_access = ProcAccess::kOk;
    } else {
      p.environ_access = access_of(err);
      p.environ_error = strerror(err);
    }
    // Its pod, if any (env/pod_cgroup.h): a few lines, capped like every file a process owns.
    if (auto cg = slurp(dir + "/cgroup", &err, kMaxCgroupBytes, &cut); cg && !cut) {
      p.cgroup = std::move(*cg);
      // Who made its folders: the kubelet's are root's (env/pod_cgroup.h pod_cgroup_untrusted).
      if (auto line = kubepods_cgroup_line(*p.cgroup)) {
        p.cgroup_owned_path = line->second;
        p.cgroup_owners = cgroup_path_owners(cgroup_root_, root_, line->first, line->second);  // os/cgroup_ns.h
      }
    }
  }
  return p;
}

std::optional<std::string> ProcFs::pid_ns_link(const std::string& who) const {
  char buf[256];
  ssize_t n = ::readlink((root_ + "/" + who + "/ns/pid").c_str(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::vector<uint32_t>> ProcFs::nspid(const std::string& who) const {
  int err = 0;
  auto status = slurp(root_ + "/" + who + "/status", &err);
  if (!status) return std::nullopt;
  return parse_nspid(*status);
}

std::string signal_process(uint32_t pid, int sig) {
  if (pid == 0 || pid > static_cast<uint32_t>(std::numeric_limits<pid_t>::max())) return "not a process id";
  if (::kill(static_cast<pid_t>(pid), sig) == 0) return "";
  if (errno == EPERM) return "not permitted: it belongs to another user (run as that user or as root)";
  if (errno == ESRCH) return "no such process";
  return strerror(errno);
}

std::string signal_process_checked(uint32_t pid, int sig, const std::function<std::string()>& same) {
  if (pid == 0 || pid > static_cast<uint32_t>(std::numeric_limits<pid_t>::max())) return "not a process id";
  int pidfd = -1;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
  pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0 && errno == ESRCH) return "no such process";
#endif
  std::string why = same();
  if (!why.empty() || pidfd < 0) {
    if (pidfd >= 0) close(pidfd);
    return why.empty() ? signal_process(pid, sig) : why;
  }
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
  long rc = ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
  int err = errno;
  close(pidfd);
  if (rc == 0) return "";
  if (err == EPERM) return "not permitted: it belongs to another user (run as that user or as root)";
  if (err == ESRCH) return "no such process";
  if (err != ENOSYS) return strerror(err);
#endif
  return signal_process(pid, sig);
}

std::optional<ProcStat> parse_proc_stat(const std::string& text) {
  size_t open = text.find('('), close = text.rfind(')');  // comm may hold spaces and parentheses
  if (open == std::string::npos || close == std::string::npos || close < open || close + 2 > text.size())
    return std::nullopt;
  ProcStat st;
  st.comm = text.substr(open + 1, close - open - 1);
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  for (int i = 3; i <= 24 && fields >> f; ++i) {
    if (i == 3) st.state = f.empty() ? '?' : f[0];
    if (i == 4) st.ppid = static_cast<uint32_t>(std::strtoul(f.c_str(), nullptr, 10));
    if (i == 14 || i == 15) st.cpu_ticks += std::strtoull(f.c_str(), nullptr, 10);
    if (i == 22) st.start_ticks = std::atoll(f.c_str());
    if (i == 24) st.rss_pages = std::strtoull(f.c_str(), nullptr, 10);
  }
  if (st.start_ticks < 0) return std::nullopt;
  return st;
}

std::optional<ProcStat> ProcFs::stat(uint32_t pid) const {
  int err = 0;
  auto text = slurp(root_ + "/" + std::to_string(pid) + "/stat", &err, 4096);
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

std::optional<double> ProcFs::uptime_s() const {
  int err = 0;
  auto text = slurp(root_ + "/uptime", &err, 256);
  if (!text) return std::nullopt;
  char* end = nullptr;
  double s = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || s < 0) return std::nullopt;
  return s;
}

int64_t clock_ticks_per_second() {
  static const int64_t hz = [] {
    long n = sysconf(_SC_CLK_TCK);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{100};
  }();
  return hz;
}

int64_t page_size_bytes() {
  static const int64_t size = [] {
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? static_cast<int64_t>(n) : int64_t{4096};
  }();
  return size;
}

}  // namespace gpumap
