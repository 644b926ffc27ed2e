#include "os/kmsg.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpumap {

KmsgRead read_kmsg(const std::string& path, size_t max_bytes) {
  KmsgRead out;
  out.path = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    out.error = errno;
    out.problem = path + ": " + std::strerror(out.error);
    if (out.error == EPERM || out.error == EACCES)
      out.problem += " (reading the kernel log needs root or CAP_SYSLOG while kernel.dmesg_restrict is 1; run gpumap "
                     "as root, or give it the capability: setcap cap_syslog+ep $(command -v gpumap))";
    return out;
  }
  // /dev/kmsg answers one record per read (EINVAL when the buffer is too small for it, EPIPE when
  // the ring overwrote the next record: read on); a regular file answers chunks.  Either way the
  // text is split on newlines, and only lines naming NVRM are kept.
  std::string pending;
  char buf[16384];
  auto keep = [&](std::string_view line) {
    ++out.records;
    if (line.find("NVRM") == std::string_view::npos || out.text.size() + line.size() + 1 > max_bytes) return;
    out.text.append(line);
    out.text.push_back('\n');
  };
  for (int retries = 0;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if ((errno == EINTR || errno == EPIPE || errno == EINVAL) && ++retries < 1000) continue;
      if (errno == EAGAIN) break;
      out.error = errno;
      out.problem = path + ": " + std::strerror(out.error);
      if (out.error == EPERM || out.error == EACCES)
        out.problem += " (reading the kernel log needs root or CAP_SYSLOG)";
      ::close(fd);
      return out;
    }
    if (n == 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1)
      keep(std::string_view(pending).substr(start, nl - start));
    pending.erase(0, start);
    if (pending.size() > 65536) pending.clear();  // no newline in 64 KiB: not a log
  }
  if (!pending.empty()) keep(pending);
  ::close(fd);
  out.readable = true;
  return out;
}

}  // namespace gpumap
