#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "output/render.h"
#include "session/output_file.h"

namespace gpumap {

Environment apply_env_options(const Environment& base, const Args& args) {
  Environment e = base;
  for (const std::string& kv : args.values("--env")) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(kExitUsage, "--env `" + kv + "` must be NAME=VALUE",
                  "use --env CUDA_VISIBLE_DEVICES=1,0 (an empty value: --env NAME=); to remove a variable: --unset NAME");
    e.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (const std::string& n : args.values("--unset")) e.unset(n);
  return e;
}

OptionSpec cvd_form_option() {
  return {"--cvd-form", true, false, "index|uuid",
          "CUDA_VISIBLE_DEVICES as PCI-order indices with CUDA_DEVICE_ORDER=PCI_BUS_ID (default: every program "
          "accepts it), or as UUIDs (stable across renumbering, but programs that int() the entries fail)"};
}

CvdForm cvd_form(const Args& args) {
  std::string text = args.value("--cvd-form").value_or("index");
  if (auto f = parse_cvd_form(text)) return *f;
  throw Error(kExitUsage, "--cvd-form `" + text + "` is not index or uuid",
              "--cvd-form index (plain indices, for programs that int() the entries) or --cvd-form uuid");
}

Environment apply_env_options(Context& ctx, const Args& args) {
  Environment e = apply_env_options(ctx.session().env(), args);
  std::optional<std::string> nvd;
  for (const std::string& kv : args.values("--env"))
    if (kv.rfind("NVIDIA_VISIBLE_DEVICES=", 0) == 0) nvd = kv.substr(std::string("NVIDIA_VISIBLE_DEVICES=").size());
  if (nvd && !ctx.session().in_container()) ctx.session().enter_container(*nvd);  // inside one, the runtime already read it
  return e;
}

OptionSpec json_file_option() {
  return {"--json-file", true, false, "FILE", "also write the mapping (and lease) as one JSON document to FILE"};
}

void report_launch(const Args& args, const Context& ctx, const Json& doc, const std::string& text) {
  if (auto path = args.value("--json-file")) {
    write_output_file(*path, dump(doc), "--json-file", "give a writable path (the command was not started)");
  }
  std::string out = ctx.json() ? dump(doc) : printable_lines(text);  // GPU names, paths: from outside
  std::cout.flush();
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

void refuse_json(const Context& ctx, const char* command, const char* instead) {
  if (ctx.json())
    throw Error(kExitUsage, std::string(command) + " writes the Prometheus text format, not JSON",
                std::string("drop --json; for JSON use ") + instead);
}

OptionSpec probe_option() {
  return {"--probe", false, false, "", "ask the CUDA driver (cuInit in a child process) instead of predicting"};
}

std::vector<OptionSpec> env_options() {
  return {{"--env", true, true, "NAME=VALUE", "reason about this value instead of this process's (repeatable); "
           "NVIDIA_VISIBLE_DEVICES=... on a host outside a container: what a container started with it sees"},
          {"--unset", true, true, "NAME", "reason as if NAME were unset (repeatable)"}};
}

}  // namespace gpumap

namespace gpumap {
namespace {

volatile sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }
int g_stdout_errno = 0;

/// A frame that failed, as the frame: the error where the output would have been.
std::string error_frame(const Error& e, bool json) {
  if (json)
    return dump(Json{{"error", {{"code", e.exit_code()}, {"message", e.what()}, {"hint", e.hint()}}}}, true);
  std::string t = "gpumap: error: " + printable(e.what()) + "\n";
  if (!e.hint().empty()) t += "  hint: " + printable_lines(e.hint()) + (e.hint().back() == '\n' ? "" : "\n");
  return t;
}

}  // namespace

int stdout_errno() { return g_stdout_errno; }

namespace {

/// std::cout's buffer, as the standard one synced with stdio is (every character straight to
/// stdout's FILE, so cout and stdio interleave as before), that also keeps the errno of the
/// first write that failed: a long output whose write fails mid-way (ENOSPC, EPIPE) is reported
/// with its reason even though later calls overwrite errno before main checks.
class ErrnoKeepingStdoutBuf : public std::streambuf {
 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return sync() == 0 ? traits_type::not_eof(c) : c;
    if (std::fputc(traits_type::to_char_type(c), stdout) == EOF) return failed();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::streamsize put = static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<size_t>(n), stdout));
    if (put < n) failed();
    return put;
  }
  int sync() override { return std::fflush(stdout) == 0 ? 0 : (failed(), -1); }

 private:
  int_type failed() {
    if (g_stdout_errno == 0) g_stdout_errno = errno;
    return traits_type::eof();
  }
};

}  // namespace

void keep_stdout_errors() {
  // Never destroyed: std::cout is flushed by the library's own exit-time destructors, which may
  // run after this file's statics are gone (ASan caught exactly that with a function-local one).
  static ErrnoKeepingStdoutBuf* buf = new ErrnoKeepingStdoutBuf;
  std::cout.rdbuf(buf);
}

std::vector<OptionSpec> query_options(const char* query) {
  // ps's --query is nvidia-smi's --query-compute-apps: its spelling is taken too.
  std::vector<std::string> aliases;
  if (std::string(query) == "--query") aliases.push_back("--query-compute-apps");
  return {{query, true, false, "FIELDS", "print these fields as CSV (nvidia-smi's names; docs/cli.md)", aliases},
          {"--format", true, false, "csv[,noheader][,nounits]", std::string("the CSV form (with ") + query + "; default csv)"},
          watch_option()};
}

bool csv_query_asked(const Args& args, const Context& ctx, const char* query, const char* example) {
  if (args.has("--format") && !args.has(query))
    throw Error(kExitUsage, std::string("--format goes with ") + query, std::string("e.g. ") + example);
  if (!args.has(query)) return false;
  if (ctx.json())
    throw Error(kExitUsage, std::string(query) + " prints CSV, not JSON", std::string("drop --json, or ") + query);
  return true;
}

OptionSpec watch_option() {
  return {"--watch", true, false, "SECONDS", "refresh every SECONDS (0.1 to 86400, fractions allowed) until interrupted"};
}

std::optional<double> watch_seconds(const Args& args) { return args.number("--watch", 0.1, 86400); }

const volatile sig_atomic_t* stop_on_signals() {
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return &g_stop;
}

int watch_frames(double seconds, Context& ctx, const std::function<std::string(Context&)>& frame) {
  stop_on_signals();
  bool first = true;
  while (!g_stop) {
    Context frame_ctx(ctx.session().driver(), ctx.session().env(), ctx.json(), ctx.session().seams());  // a fresh snapshot per frame
    std::string f;
    try {
      f = frame(frame_ctx);
    } catch (const Error& e) {
      if (e.exit_code() == kExitUsage) throw;  // the command line is wrong: every frame would say so
      f = error_frame(e, ctx.json());  // this read failed (a driver error, a hung read): say so, go on
    }
    if (ctx.json()) std::cout << f;
    else if (term_style().tty) std::cout << "\033[H\033[2J" << f;  // redraw in place
    else std::cout << (first ? "" : "\n") << f;  // a pipe gets plain frames, one after another
    first = false;
    errno = 0;
    std::cout.flush();
    if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      if (g_stdout_errno == 0) g_stdout_errno = errno;
      break;  // nobody reads any more (EPIPE with SIGPIPE ignored) or the disk is full: main says which
    }
    timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
    while (!g_stop && nanosleep(&ts, &ts) != 0) {
    }
  }
  return kExitOk;
}

namespace {

/// What `run` prints on stdout for `ctx`, as one watch frame (JSON: on one line).
std::string capture_frame(const Args& args, Context& ctx, int (*run)(const Args&, Context&)) {
  std::ostringstream buf;
  std::streambuf* old = std::cout.rdbuf(buf.rdbuf());
  try {
    run(args, ctx);  // the frame's exit code (doctor's 7) is not the watch's: it ends with 0 on Ctrl-C
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  if (!ctx.json()) return buf.str();
  // One document per line: the command's document, written again without indentation.
  return dump(Json::parse(buf.str()), true);
}

}  // namespace

int run_watchable(const Args& args, Context& ctx, int (*run)(const Args&, Context&)) {
  if (std::optional<double> w = watch_seconds(args))
    return watch_frames(*w, ctx, [&](Context& c) { return capture_frame(args, c, run); });
  return run(args, ctx);
}

}  // namespace gpumap
