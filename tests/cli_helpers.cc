#include "cli_helpers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>

#include "cli/cli_main.h"
#include "cli/command.h"  // keep_stdout_errors

namespace gpumap::testing {

std::string temp_dir(const std::string& tag) {
  static std::atomic<int> n{0};
  std::string base = ::testing::TempDir();
  if (base.empty() || base.back() != '/') base += "/";
  std::string tmpl = base + "gpumap-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(n++) + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data())) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
  return buf.data();
}

std::string write_temp_file(const std::string& name, const std::string& text) {
  std::string p = temp_dir("file") + "/" + name;
  std::ofstream(p) << text;
  return p;
}

std::string gpumap_for_other_users() {
  namespace fs = std::filesystem;
  std::string dir = temp_dir("for-others");
  chmod(dir.c_str(), 0755);
  std::error_code ec;
  fs::copy_file(GPUMAP_BINARY, dir + "/gpumap", ec);
  EXPECT_FALSE(ec) << "copying " << GPUMAP_BINARY << ": " << ec.message();
  chmod((dir + "/gpumap").c_str(), 0755);
  fs::create_directory(dir + "/sim", ec);
  chmod((dir + "/sim").c_str(), 0755);
  for (const auto& e : fs::directory_iterator(std::string(GPUMAP_BUILD_DIR) + "/sim", ec)) {
    std::string to = dir + "/sim/" + e.path().filename().string();
    fs::copy_file(e.path(), to, ec);
    EXPECT_FALSE(ec) << "copying " << e.path() << ": " << ec.message();
    chmod(to.c_str(), 0755);
  }
  EXPECT_FALSE(ec) << "reading " << GPUMAP_BUILD_DIR << "/sim: " << ec.message();
  return dir + "/gpumap";
}

bool can_run_as_nobody(std::string& why) {
  if (geteuid() != 0) {
    why = "needs root (to run gpumap as nobody)";
    return false;
  }
  if (access("/usr/bin/setpriv", X_OK) != 0) {
    why = "needs /usr/bin/setpriv (util-linux)";
    return false;
  }
  ProcResult r = run_capture({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/true"},
                             {"PATH=/usr/bin:/bin"}, 30000);
  if (r.exit_code != 0) {
    why = "setpriv cannot switch to nobody here: " + r.err;
    return false;
  }
  return true;
}

std::string host_path(const std::string& name) {
  std::string src = GPUMAP_SOURCE_DIR;
  if (access((src + "/hosts/" + name + ".json").c_str(), R_OK) == 0) return src + "/hosts/" + name + ".json";
  return src + "/tests/hosts/" + name + ".json";
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

CliRun gpumap(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> argv = {GPUMAP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, env);
}

bool bash_accepts(const std::string& line, std::string& err) {
  CliRun r = run_program({"/bin/bash", "-n", "-c", line});
  err = r.err;
  return r.code == 0;
}

CliRun gpumap_tty(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::string cmd = shell_quote(GPUMAP_BINARY);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  CliRun r = run_program({"/usr/bin/script", "-qec", cmd, "/dev/null"}, env);
  std::string out;
  for (size_t i = 0; i < r.out.size(); ++i)
    if (!(r.out[i] == '\r' && i + 1 < r.out.size() && r.out[i + 1] == '\n')) out += r.out[i];
  r.out = out;
  return r;
}

namespace {

/// PATH, a fresh HOME, GPUMAP_CACHE_DIR and GPUMAP_LOCK_DIR, then `env` (a later NAME= replaces
/// the default).  The lock folder is the test's own: with the default, /tmp/gpumap-leases, two
/// tests that lease the same simulated GPU at once would wait on each other (and leave files there).
std::vector<std::string> clean_environment(const std::vector<std::string>& env) {
  std::vector<std::string> e = {"PATH=/usr/bin:/bin", "HOME=" + temp_dir("home"),
                                "GPUMAP_CACHE_DIR=" + temp_dir("cache"), "GPUMAP_LOCK_DIR=" + temp_dir("locks")};
  for (const std::string& kv : env) {
    std::string name = kv.substr(0, kv.find('=') + 1);
    for (auto it = e.begin(); it != e.end();) it = it->rfind(name, 0) == 0 ? e.erase(it) : it + 1;
    e.push_back(kv);
  }
  return e;
}

std::string read_all(FILE* f) {
  std::string text;
  std::rewind(f);
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  return text;
}

/// For the length of one gpumap_here(): fd 0 from /dev/null, fds 1 and 2 into fresh files; the
/// test's own descriptors back (and stdout's error flag cleared) as it ends, also on an exception.
class Redirect {
 public:
  Redirect() : out_(std::tmpfile()), err_(std::tmpfile()) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    for (int fd = 0; fd < 3; ++fd) saved_[fd] = dup(fd);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    dup2(devnull, 0);
    close(devnull);
    dup2(fileno(out_), 1);
    dup2(fileno(err_), 2);
  }
  ~Redirect() {
    restore();
    std::fclose(out_);
    std::fclose(err_);
  }
  Redirect(const Redirect&) = delete;
  Redirect& operator=(const Redirect&) = delete;
  /// The descriptors back; what was written.
  void restore() {
    if (saved_[0] < 0) return;
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    for (int fd = 0; fd < 3; ++fd) {
      dup2(saved_[fd], fd);
      close(saved_[fd]);
      saved_[fd] = -1;
    }
    std::clearerr(stdout);
    std::cout.clear();
  }
  std::string out() { return read_all(out_); }
  std::string err() { return read_all(err_); }

 private:
  FILE* out_;
  FILE* err_;
  int saved_[3] = {-1, -1, -1};
};

}  // namespace

CliRun gpumap_here(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  static bool once = (keep_stdout_errors(), true);  // as main() does, once
  (void)once;
  Environment e = Environment::from_strings(clean_environment(env));
  Redirect io;
  int code = cli_main(args, e, GPUMAP_BINARY);
  io.restore();
  return {code, io.out(), io.err()};
}

CliRun run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  ProcResult r = run_capture(argv, clean_environment(env), 60000);
  EXPECT_FALSE(r.timed_out) << "gpumap timed out";
  EXPECT_TRUE(r.spawn_error.empty()) << r.spawn_error;
  return {r.exit_code, r.out, r.err};
}

Sleeper::Sleeper(std::vector<std::string> env, const std::string& name, int seconds) {
  std::string secs = std::to_string(seconds), arg0 = name;
  pid_ = fork();
  if (pid_ == 0) {
    std::vector<char*> e;
    for (std::string& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    char* argv[] = {arg0.data(), secs.data(), nullptr};
    execve("/bin/sleep", argv, e.data());
    _exit(127);
  }
  // Until the child has exec'd, so /proc shows sleep's command line and environment, not ours.
  for (int i = 0; i < 400; ++i) {
    std::ifstream f("/proc/" + std::to_string(pid_) + "/cmdline");
    std::string c((std::istreambuf_iterator<char>(f)), {});
    if (c.rfind(name + std::string(1, '\0') + secs, 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Sleeper::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace gpumap::testing
