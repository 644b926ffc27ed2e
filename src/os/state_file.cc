#include "os/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpumap {

FileText read_small_file(const std::string& path, size_t max_bytes) {
  FileText r;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.error = errno;
    return r;
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    r.error = EISDIR;
    return r;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.error = errno;
      break;
    }
    if (n == 0) break;
    if (r.text.size() + static_cast<size_t>(n) > max_bytes) {
      r.too_big = true;
      r.text.clear();
      break;
    }
    r.text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return r;
}

namespace {

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string write_file_atomically(const std::string& path, const std::string& text, mode_t mode) {
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return "cannot create a file in " + folder_of(path) + ": " + std::strerror(errno);
  std::string error;
  if (fchmod(fd, mode) != 0 || !write_all(fd, text) || fsync(fd) != 0) error = std::strerror(errno);
  if (close(fd) != 0 && error.empty()) error = std::strerror(errno);
  if (error.empty() && rename(name.data(), path.c_str()) != 0) error = std::strerror(errno);
  if (!error.empty()) {
    unlink(name.data());
    return "cannot write " + path + ": " + error;
  }
  // The rename is durable once the folder is synced; a failure here loses nothing already written.
  if (int dfd = open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return "";
}

std::string make_dirs(const std::string& dir, mode_t mode) {
  for (size_t pos = 0; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    std::string part = dir.substr(0, pos);
    if (part.empty() || mkdir(part.c_str(), mode) == 0 || errno == EEXIST) continue;
    return "cannot create " + part + ": " + std::strerror(errno);
  }
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return dir + " is not a folder";
  return "";
}

}  // namespace gpumap
