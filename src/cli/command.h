// The command table: one command per file under src/cli/, listed in commands.cc.
#pragma once
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "output/json_view.h"
#include "output/manual.h"
#include "session/launch.h"
#include "session/session.h"

namespace gpumap {

/// What every command gets: a session (driver, environment, seams, snapshot) and the output mode.
class Context {
 public:
  Context(DriverSource driver, Environment env, bool json, Seams seams)
      : session_(std::move(driver), std::move(env), std::move(seams)), json_(json) {}
  Session& session() { return session_; }
  const Session& session() const { return session_; }
  bool json() const { return json_; }

 private:
  Session session_;
  bool json_;
};

struct Command {
  const char* name;
  const char* summary;
  const char* usage;        // "gpumap map [--json] [--env NAME=VALUE]..."
  const char* description;  // what it does, exit codes that differ from the defaults
  std::vector<OptionSpec> options;  // besides common_options()
  bool positionals = false;
  int (*run)(const Args& args, Context& ctx);
  bool hidden = false;
  bool runs_command = false;  // takes CMD [ARGS...] after `--` (run, bind)
  /// The exit codes it may end with besides 0 and those of any command (1, 2, 3): the man
  /// page's EXIT STATUS names the commands of each code from these (set in commands.cc).
  std::vector<int> exit_codes = {};
  /// The words its first argument may be (snapshot: save, diff); the completion offers them.
  std::vector<std::string> subcommands = {};
  /// What its arguments are, for the completion ("GPU": the host's GPUs); "" for nothing known.
  std::string positional_value = "";
  /// Takes --json (top, metrics and serve refuse it, saying what to use): every listing (--help,
  /// help --json, the man page, the completion) shows it only then, through command_options().
  bool json = true;
  /// Without --json: what to use instead, the hint of the refusal.
  std::string json_instead = "";
  /// Takes --simulate (fleet refuses it: it reads Prometheus, not a host), and if not, the hint.
  bool simulate = true;
  std::string simulate_instead = "";
};

/// Every option `c` takes, its own then the common ones it takes: what the parser accepts and
/// the one list every listing is made from, so none lists an option the command refuses.
std::vector<OptionSpec> command_options(const Command& c);

/// The common options (args.h: common_options) that `c` refuses, by name ("--json").
std::vector<std::string> common_options_refused(const Command& c);

/// Refuses, before anything else, a common option `c` does not take: Error(kExitUsage) with the
/// command's own hint.  Nothing when `args` has none, or asks for help (`top --help --json` is
/// top's help as JSON).
void refuse_untaken_options(const Command& c, const std::vector<std::string>& args);

const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

// One per file.
Command list_command();
Command map_command();
Command probe_command();
Command ps_command();
Command pods_command();
Command top_command();
Command explain_command();
Command which_command();
Command verify_command();
Command doctor_command();
Command pick_command();
Command run_command();
Command bind_command();
Command snapshot_command();
Command job_command();
Command metrics_command();
Command serve_command();
Command job_map_command();
Command fleet_command();
Command health_command();

/// `snapshot diff` and `verify --snapshot`: compares the host now with the snapshot at `path`
/// (`is_default`: the default file), prints the differences; returns 0 (same) or 4 (differs).
int snapshot_check(Context& ctx, const std::string& path, bool is_default);
Command describe_command();

/// The command table and the rest of the reference (exit codes, environment, files) as data:
/// the man page, the completion scripts and `gpumap __describe` come from it.
CliReference cli_reference();
/// The documented exit codes (--help's line, the man page, docs/cli.md).
std::vector<ExitCodeDoc> exit_code_docs();

/// Applies --env NAME=VALUE and --unset NAME to a copy of `base`; Error(kExitUsage) on a bad pair.
Environment apply_env_options(const Environment& base, const Args& args);
/// The same on the context's environment; then, on a host outside a container, `--env
/// NVIDIA_VISIBLE_DEVICES=...` makes the session predict that container's view
/// (Session::enter_container).
Environment apply_env_options(Context& ctx, const Args& args);
std::vector<OptionSpec> env_options();
/// --cvd-form index|uuid: how run/bind/pick write CUDA_VISIBLE_DEVICES (default index).
OptionSpec cvd_form_option();
/// The form --cvd-form asks for; Error(kExitUsage) naming a bad value.
CvdForm cvd_form(const Args& args);
/// --json-file FILE for run and bind, whose stdout belongs to the command they start.
OptionSpec json_file_option();
/// Says how a launch is set up, before the command starts: `doc` to the --json-file FILE when
/// given, and on stderr `doc` with --json, else `text`.  Error(kExitError) naming FILE when it
/// cannot be written (the command is then not started).
void report_launch(const Args& args, const Context& ctx, const Json& doc, const std::string& text);
/// Error(kExitUsage) when --json was given to `command`, which writes the Prometheus text format;
/// the hint names `instead`.
void refuse_json(const Context& ctx, const char* command, const char* instead);
/// From now on SIGINT and SIGTERM set the flag returned (and stop nothing else): what --watch
/// and `serve` wait on.
const volatile sig_atomic_t* stop_on_signals();
/// --watch SECONDS (list, map, doctor, ps): refresh until interrupted.
OptionSpec watch_option();
/// Its value, checked (0.1 to 86400); nullopt without --watch.
std::optional<double> watch_seconds(const Args& args);
/// Prints `frame` of a fresh context (a new snapshot) every `seconds` until SIGINT/SIGTERM, then
/// returns 0: on a terminal in place, into a pipe one frame after another (a blank line between),
/// JSON one document per line (`frame` writes it on one line).  A frame that fails (the driver
/// errs or hangs this time) is reported in that frame (text: "gpumap: error: ..." and its hint;
/// JSON: {"error": {...}} on its line) and the watch goes on; a usage error ends it at once.
/// Once stdout cannot be written (EPIPE: the reader is gone, with SIGPIPE ignored; ENOSPC) the
/// watch ends, its errno kept for main's check (exit 1 with the reason, as `yes | head -1` does).
int watch_frames(double seconds, Context& ctx, const std::function<std::string(Context&)>& frame);
/// The errno of the first write to stdout that failed, 0 when none was seen (std::cout's writes
/// once keep_stdout_errors() ran, and watch_frames' flushes).
int stdout_errno();
/// Gives std::cout a buffer that keeps that errno; called once as main starts.
void keep_stdout_errors();
/// `run`, or with --watch SECONDS what it prints as one frame per SECONDS (watch_frames).
int run_watchable(const Args& args, Context& ctx, int (*run)(const Args&, Context&));
/// `query` (--query-gpu, --query: FIELDS as CSV), --format csv[,noheader][,nounits] and --watch.
std::vector<OptionSpec> query_options(const char* query);
/// Whether `query` was given, checked: Error(kExitUsage) for --format without it (naming
/// `example`), or with --json.
bool csv_query_asked(const Args& args, const Context& ctx, const char* query, const char* example);
/// --probe: ask the driver (cuInit in a child process) instead of predicting.
OptionSpec probe_option();

}  // namespace gpumap
