// A real terminal for `gpumap top`'s tests: a tmux server of its own running one window, driven
// with keys and read from the screen (the same harness as tests/cli_top_test.cc's, shared by the
// tests of other screen sizes and of the fleet's first read).
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli_helpers.h"

namespace gpumap::testing {

/// tmux's path from PATH ("" when not installed).
inline std::string tmux_path() {
  for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin"})
    if (access((std::string(dir) + "/tmux").c_str(), X_OK) == 0) return std::string(dir) + "/tmux";
  return "";
}

inline bool has_tmux() { return !tmux_path().empty(); }

/// A tmux server of its own (socket in a fresh /tmp folder: a socket path must stay short),
/// running one window; the server is killed and the folder removed on destruction.
class Tmux {
 public:
  Tmux(size_t width, size_t height, const std::vector<std::string>& command) {
    char dir[] = "/tmp/gpumap-tmux-XXXXXX";
    if (!mkdtemp(dir)) ADD_FAILURE() << "mkdtemp failed";
    dir_ = dir;
    socket_ = dir_ + "/s";
    std::ofstream(dir_ + "/conf") << "set -g status off\n";
    std::vector<std::string> argv = {tmux_path(), "-S", socket_, "-f", dir_ + "/conf", "new-session", "-d",
                                     "-x", std::to_string(width), "-y", std::to_string(height)};
    // The command runs under a shell that then prints its exit status and stays, as after a
    // person's `gpumap top` in their terminal: the screen, cursor and mode it leaves can be read.
    argv.insert(argv.end(), {"/bin/sh", "-c", "\"$@\"; echo \"EXIT=$?\"; exec sleep 120", "sh"});
    argv.insert(argv.end(), command.begin(), command.end());
    CliRun r = run_program(argv);
    started_ = r.code == 0;
    EXPECT_TRUE(started_) << r.err;
  }
  ~Tmux() {
    run_program({tmux_path(), "-S", socket_, "kill-server"});
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string tmux(std::vector<std::string> args) {
    args.insert(args.begin(), {tmux_path(), "-S", socket_});
    return run_program(args).out;
  }
  std::string screen() { return tmux({"capture-pane", "-p"}); }
  std::string screen_with_escapes() { return tmux({"capture-pane", "-p", "-e"}); }
  void keys(const std::vector<std::string>& k) {
    std::vector<std::string> a = {"send-keys"};
    a.insert(a.end(), k.begin(), k.end());
    tmux(a);
  }
  std::string format(const std::string& f) {
    std::string s = tmux({"display-message", "-p", f});
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  /// Waits for the command to end; its exit status.
  std::string exit_status() {
    std::string s = wait_for_text("EXIT=");
    size_t at = s.find("EXIT=") + 5;
    return s.substr(at, s.find('\n', at) - at);
  }
  /// Waits (up to 15 s) until the screen satisfies `ok`; the last screen is returned either way.
  std::string wait_for(const std::function<bool(const std::string&)>& ok) {
    std::string s;
    for (int i = 0; i < 150; ++i) {
      s = screen();
      if (ok(s)) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the screen never became what the test waited for:\n" << s;
    return s;
  }
  std::string wait_for_text(const std::string& text) {
    return wait_for([&](const std::string& s) { return s.find(text) != std::string::npos; });
  }
  bool started() const { return started_; }

 private:
  std::string dir_, socket_;
  bool started_ = false;
};


/// `gpumap top ARGS` with a clean environment: a UTF-8 xterm unless `env` says otherwise.
inline std::vector<std::string> top_tmux_command(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
  std::vector<std::string> c = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", "TERM=xterm-256color", "LANG=C.UTF-8"};
  c.insert(c.end(), env.begin(), env.end());
  c.push_back(GPUMAP_BINARY);
  c.push_back("top");
  c.insert(c.end(), args.begin(), args.end());
  return c;
}

}  // namespace gpumap::testing
