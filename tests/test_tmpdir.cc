// Every test process works in one private temporary folder that is removed when it exits:
// it sets TEST_TMPDIR (which ::testing::TempDir() returns) before any test runs, so every
// helper that makes folders under TempDir() is cleaned up with it.
#include <ftw.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  remove(path);
  return 0;
}

class PrivateTempDir {
 public:
  PrivateTempDir() : owner_(getpid()) {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gpumap-test-XXXXXX";
    if (mkdtemp(tmpl.data())) {
      dir_ = tmpl;
      // Others may pass through (not list it): the cross-user tests run gpumap as nobody on
      // files in a folder of their own below it.
      chmod(dir_.c_str(), 0711);
      setenv("TEST_TMPDIR", (dir_ + "/").c_str(), 1);
    }
  }
  ~PrivateTempDir() {
    // A forked child that returns through exit() must not remove its parent's folder.
    if (!dir_.empty() && getpid() == owner_) nftw(dir_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }

 private:
  pid_t owner_;
  std::string dir_;
};

PrivateTempDir private_temp_dir;

}  // namespace
