#include "os/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace gpumap {

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

FileText read_small_file(const std::string& path, size_t max_bytes, bool follow_symlink) {
  FileText r;
  // The type first, without opening: opening a device node can act (a tape rewinds, a modem
  // hangs up), and a FIFO opened for reading blocks until a writer comes.
  struct stat before {};
  if ((follow_symlink ? stat(path.c_str(), &before) : lstat(path.c_str(), &before)) != 0) {
    r.error = errno;
    return r;
  }
  if (S_ISDIR(before.st_mode)) {
    r.error = EISDIR;
    return r;
  }
  if (!S_ISREG(before.st_mode)) {
    r.error = EINVAL;
    r.not_regular = file_kind(before.st_mode);
    return r;
  }
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow_symlink ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    r.error = errno == ELOOP ? EINVAL : errno;
    if (errno == ELOOP) r.not_regular = "a symbolic link";
    return r;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // swapped between the stat and the open
    r.error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    if (r.error == EINVAL) r.not_regular = file_kind(st.st_mode);
    close(fd);
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

std::string check_replaceable(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  return path + " is " + file_kind(st.st_mode) + ", not a regular file: not replacing it";
}

std::string write_file_atomically(const std::string& path, const std::string& text, mode_t mode) {
  std::string folder = folder_of(path);
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (name.empty() || name == "." || name == "..")
    return "cannot write " + path + ": it names a folder, not a file";
  int dfd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return "cannot create a file in " + folder + ": " + std::strerror(errno);
  struct stat dst {};
  if (fstat(dfd, &dst) == 0 && (dst.st_mode & S_IWOTH) && !(dst.st_mode & S_ISVTX)) {
    close(dfd);
    return "cannot write " + path + ": its folder " + folder +
           " is writable by everyone but not sticky (anyone could replace the file); chmod o-w or +t " + folder;
  }
  auto refuse = [&](const struct stat& st) {
    close(dfd);
    return path + " is " + file_kind(st.st_mode) + ", not a regular file: not replacing it";
  };
  struct stat st {};
  if (fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) return refuse(st);
  std::string tmp;
  int fd = -1;
  std::random_device rd;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rd()));
    tmp = name + ".tmp." + suffix;
    fd = openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    std::string e = "cannot create a file in " + folder + ": " + std::strerror(errno);
    close(dfd);
    return e;
  }
  std::string error;
  if (fchmod(fd, mode) != 0 || !write_all(fd, text) || fsync(fd) != 0) error = std::strerror(errno);
  if (close(fd) != 0 && error.empty()) error = std::strerror(errno);
  // Looked at again just before the rename: a node put there since the first look is refused too
  // (what remains is the instant between this look and the rename, which replaces the name and
  // never writes through it).
  if (error.empty() && fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
    unlinkat(dfd, tmp.c_str(), 0);
    return refuse(st);
  }
  if (error.empty() && renameat(dfd, tmp.c_str(), dfd, name.c_str()) != 0) error = std::strerror(errno);
  if (!error.empty()) {
    unlinkat(dfd, tmp.c_str(), 0);
    close(dfd);
    return "cannot write " + path + ": " + error;
  }
  // The rename is durable once the folder is synced; a failure here loses nothing already written.
  fsync(dfd);
  close(dfd);
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
