// gpumap: which physical GPU your code will run on.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <iostream>

#include "cli/cli_main.h"
#include "cli/command.h"
#include "session/which.h"  // parse_cuda_ordinal, answer_cuda_ordinal (resolve/gpu_selector.h)
#include "cli/version.h"
#include "model/error.h"
#include "model/text.h"
#include "output/manual.h"
#include "output/style.h"
#include "output/render.h"

using namespace gpumap;

namespace {

/// The seams of the gpumap binary: from its environment, with the probe child being itself
/// (`program`: the binary's path; "" for this process's own).
Seams cli_seams(const Environment& env, const std::optional<std::string>& simulate, const std::string& program) {
  // Another binary's: its data files and sim/ beside it, as they are beside this one.
  Seams seams = program.empty() ? program_seams(env, simulate, "__probe")
                                : seams_from_environment(env, program.substr(0, program.rfind('/')), simulate);
  if (!program.empty()) seams.probe_command = {program, "__probe"};
  seams.notices = std::make_shared<RunNotices>();
  return seams;
}

/// What the run met and no answer says (an unusable order cache folder), once, on stderr.
void say_notices(const Seams& seams) {
  if (!seams.notices) return;
  for (const std::string& line : seams.notices->take()) std::fputs((printable(line) + "\n").c_str(), stderr);
}

/// A command answering from a simulated host says so on stderr, before it answers (a run then
/// launches its program on GPUs chosen there): pick, which and verify said nothing, so a
/// GPUMAP_SIMULATE left exported silently drove a real launch.  Commands whose text starts with the
/// host's banner (SIMULATED host ...) say it there.
/// With --json the answer itself says `"simulated": true` (and `run`/`bind` write their JSON on
/// stderr, which a line before it would break).  Wrapped at 80 columns, as the prose it precedes.
void say_simulated(const Command& cmd, const Seams& seams, bool flag, bool json) {
  static const std::string kBannered[] = {"map", "list", "doctor", "explain", "ps", "pods", "snapshot", "top"};
  if (json || !seams.simulate || cmd.hidden ||
      std::find(std::begin(kBannered), std::end(kBannered), std::string(cmd.name)) != std::end(kBannered))
    return;
  std::string line = "gpumap: SIMULATED host " + *seams.simulate +
                     (flag ? " (--simulate)" : " (GPUMAP_SIMULATE is set: unset it for this machine's GPUs)") +
                     ": " + cmd.name + " answers for it, not for this machine's GPUs";
  std::fputs((wrap(printable_lines(line), 80, 0, 2) + "\n").c_str(), stderr);
}

/// A filter's value is text to match against names, ids and commands: one that is not UTF-8 (a
/// stray byte from a script, a terminal in Latin-1) matches nothing and cannot be written in a
/// JSON answer; it was "internal error" (issue 56 item 13).  A usage error naming the option.
void refuse_non_utf8_filters(const Args& args) {
  for (const char* option : {"--user", "--job", "--node", "--gpu-model", "--filter", "--gpu", "--pid"})
    for (const std::string& v : args.values(option))
      for (size_t i = 0; i < v.size();) {
        size_t n = utf8_sequence_length(v, i);
        if (n == 0)
          throw Error(kExitUsage,
                      std::string(option) + " `" + printable(v) + "` is not valid UTF-8 (byte " + std::to_string(i + 1) + ")",
                      std::string("give ") + option + " as text (names, ids and commands are matched as UTF-8)");
        i += n;
      }
}

/// `help --json`: the command reference as data (what `gpumap __describe` prints), or one
/// command's entry of it.
void print_help_json(const Command* cmd) {
  nlohmann::ordered_json ref = reference_json(cli_reference());
  nlohmann::ordered_json entry;
  if (cmd)
    for (const auto& c : ref["commands"])
      if (c["name"] == cmd->name) entry = c;
  std::cout << (entry.is_null() ? ref : entry).dump(2) << "\n";
}

/// `gpumap --simulate HOST --json which cuda:1`, `gpumap --env X=Y doctor`: the options every
/// command takes (and --env/--unset, which the environment commands take) may come before the
/// command too, as git's and kubectl's do; they move behind it, where Args parses them (and refuses
/// one the command does not take, naming it).
std::vector<std::string> command_first(const std::vector<std::string>& args) {
  size_t i = 0;
  while (i < args.size()) {
    const std::string& a = args[i];
    if (a == "--json" || a == "--wide" || a.rfind("--simulate=", 0) == 0 || a.rfind("--env=", 0) == 0 ||
        a.rfind("--unset=", 0) == 0)
      ++i;
    else if ((a == "--simulate" || a == "--env" || a == "--unset") && i + 1 < args.size()) i += 2;
    else break;
  }
  if (i == 0 || i >= args.size() || !find_command(args[i])) return args;
  std::vector<std::string> out{args[i]};
  out.insert(out.end(), args.begin(), args.begin() + static_cast<long>(i));
  out.insert(out.end(), args.begin() + static_cast<long>(i) + 1, args.end());
  return out;
}

/// The error on stderr (a hint of several lines keeps them, indented) and, with --json, also as
/// {"error": {"code", "message", "hint"}} on stdout (the C API's shape), so `| jq` sees it.
int report_error(const Error& e, bool json) {
  std::cout.flush();
  // Messages quote inputs (arguments, variables, lease records): print them defanged.
  std::string text = "gpumap: error: " + printable(e.what()) + "\n";
  if (!e.hint().empty()) {
    std::string hint = printable_lines(e.hint());
    for (size_t nl = hint.find('\n'); nl != std::string::npos && nl + 1 < hint.size(); nl = hint.find('\n', nl + 1))
      hint.insert(nl + 1, "        ");
    text += "  hint: " + hint + (hint.back() == '\n' ? "" : "\n");
  }
  std::fputs(text.c_str(), stderr);
  if (json)
    std::cout << dump(Json{{"error", {{"code", e.exit_code()}, {"message", e.what()}, {"hint", e.hint()}}}});
  return e.exit_code();
}

/// Whether stdout took everything written to it; run once, as the command ends.  A command's
/// output that did not arrive (a full disk, /dev/full, a reader gone with SIGPIPE ignored, as
/// systemd services run) is a failure: said on stderr, exit 1, never 0.  `code`: the command's.
int check_stdout(int code) {
  errno = 0;
  std::cout.flush();  // cout writes through stdout's buffer: this is where a buffered write fails
  int err = errno;
  if (std::fflush(stdout) != 0) err = errno;
  if (!std::ferror(stdout) && std::cout.good()) return code;
  if (stdout_errno() != 0) err = stdout_errno();  // the first failure's reason, kept as it happened
  std::string why = err ? std::strerror(err) : "a write failed";
  std::fputs(("gpumap: error: cannot write the output (stdout): " + why + "\n").c_str(), stderr);
  return code == kExitOk ? kExitError : code;
}

bool has_json_flag(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--json") return true;
  }
  return false;
}

void print_main_help(const Environment& env, const std::string& program) {
  std::string s =
      fill_text("gpumap " GPUMAP_VERSION " - which physical GPU your code will run on, and how to make it the one you meant", 80) +
      "\n\nusage: gpumap [COMMAND] [OPTIONS]      (no command: `gpumap map`)\n\ncommands:\n";
  for (const Command& c : commands()) {
    if (c.hidden) continue;
    std::string n = std::string("  ") + c.name;
    n.resize(12, ' ');
    s += n + indent_lines(fill_text(c.summary, 80 - 12), 12) + "\n";
  }
  std::vector<OptionSpec> common = common_options();
  for (OptionSpec& o : common) {  // which commands refuse it, from the table the parser reads
    std::vector<std::string> not_by;
    for (const Command& c : commands()) {
      std::vector<std::string> refused = common_options_refused(c);
      if (!c.hidden && std::find(refused.begin(), refused.end(), o.name) != refused.end()) not_by.push_back(c.name);
    }
    if (!not_by.empty()) o.help += " (not " + join(not_by, ", ") + ")";
  }
  s += "\ncommon options:\n" + format_options(common) +
       "  --version               print the version and the git commit it was built from\n\n";
  std::string tail = "Every command reads the real driver (libnvidia-ml.so.1, libcuda.so.1) unless --simulate names a "
                     "simulated host: " + bundled_host_names(cli_seams(env, std::nullopt, program)) +
                     ", or a JSON file (docs/host-file.md).\nExit codes:";
  for (const ExitCodeDoc& e : exit_code_docs()) tail += " " + std::to_string(e.code) + " " + e.brief + ",";
  tail.back() = ' ';
  tail += "(docs/cli.md, man gpumap).";
  s += fill_text(tail, 80) + "\n";
  std::fputs(s.c_str(), stdout);
}

/// " (did you mean `list`?)" for the closest visible command within two edits; "" otherwise.
std::string did_you_mean_command(const std::string& typed) {
  std::vector<std::string> names;
  for (const Command& c : commands())
    if (!c.hidden) names.push_back(c.name);
  return did_you_mean(typed, names);
}

// "gpumap 0.1.0 (commit 0123abcd..., 2026-11-30)"; with --json the same as an object.
int print_version(bool json) {
  std::string date = build_commit_date();
  if (json)
    std::cout << Json{{"version", GPUMAP_VERSION}, {"commit", build_commit()}, {"commit_date", date.empty() ? Json(nullptr) : Json(date)}}.dump(2) << "\n";
  else
    std::cout << "gpumap " GPUMAP_VERSION " (commit " << build_commit() << (date.empty() ? "" : ", " + date) << ")\n";
  return kExitOk;
}

int print_version(const std::vector<std::string>& args) {
  bool json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] != "--json")
      throw Error(kExitUsage, "--version: unexpected argument `" + args[i] + "`", "use gpumap --version [--json]");
    json = true;
  }
  return print_version(json);
}

/// Where `--version` (or `-V`) stands among a command's arguments: before `--`, and not the value
/// of an option that takes one (`--env --version` is --env's value).
std::optional<size_t> version_flag(const std::vector<std::string>& args, const std::vector<OptionSpec>& opts) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return std::nullopt;
    if (a == "--version" || a == "-V") return i;
    for (const OptionSpec& o : opts)
      if (o.takes_value && (a == o.name || std::find(o.aliases.begin(), o.aliases.end(), a) != o.aliases.end())) ++i;
  }
  return std::nullopt;
}

void print_command_help(const Command& c) {
  std::vector<OptionSpec> opts = command_options(c);  // only the options it takes
  std::string usage = wrap_synopsis(c.usage, 80 - 7);  // within 80 columns after "usage: "
  for (size_t nl = usage.find('\n'); nl != std::string::npos; nl = usage.find('\n', nl + 1)) usage.insert(nl + 1, 7, ' ');
  std::string s = "usage: " + usage + "\n\n" + fill_text(c.description, 80) + "\n\noptions:\n" + format_options(opts);
  std::fputs(s.c_str(), stdout);
}

int run_main(const std::vector<std::string>& argv, const Environment& env, const std::string& program) {
  std::vector<std::string> args = command_first(argv);
  const Command* cmd = nullptr;
  Seams seams;
  try {
    if (!args.empty() && (args[0] == "--version" || args[0] == "-V")) return print_version(args);
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
      const Command* about = args.size() > 1 && args[0] == "help" ? find_command(args[1]) : nullptr;
      // `gpumap help doctr`: the command typo it is, not the general help with exit 0.
      if (args.size() > 1 && args[0] == "help" && !about && args[1].rfind("-", 0) != 0)
        throw Error(kExitUsage, "unknown command `" + args[1] + "`" + did_you_mean_command(args[1]),
                    "run `gpumap --help` for the list");
      if (has_json_flag(args)) print_help_json(about);
      else if (about) print_command_help(*about);
      else print_main_help(env, program);
      return kExitOk;
    }
    if (args.empty() || args[0].rfind("-", 0) == 0 || parse_cuda_ordinal(args[0])) {
      cmd = find_command("map");
    } else {
      cmd = find_command(args[0]);
      if (!cmd)
        throw Error(kExitUsage, "unknown command `" + args[0] + "`" + did_you_mean_command(args[0]),
                    "run `gpumap --help` for the list");
      args.erase(args.begin());
    }
    std::vector<OptionSpec> opts = cmd->options;
    for (const OptionSpec& o : common_options()) opts.push_back(o);
    // `--version` anywhere (`gpumap --simulate X --version`): the version, once the rest is
    // checked as the command would check it; never a word after `--` (the program's own).
    std::optional<size_t> version = version_flag(args, opts);
    if (version) args.erase(args.begin() + static_cast<long>(*version));
    // A common option it does not take is refused before anything (the listings leave it out,
    // from the same table); `CMD --help --json` is still its help as JSON.
    refuse_untaken_options(*cmd, args);
    Args parsed(cmd->name, opts, args, cmd->positionals, cmd->runs_command);
    if (version) return print_version(parsed.has("--json"));
    refuse_non_utf8_filters(parsed);
    if (parsed.has("--help")) {
      if (parsed.has("--json")) print_help_json(cmd);
      else print_command_help(*cmd);
      return kExitOk;
    }
    set_term_style(term_style_from_env(env, parsed.has("--wide")));
    seams = cli_seams(env, parsed.value("--simulate"), program);
    Context ctx(select_checked_driver(seams), env, parsed.has("--json"), seams);
    say_simulated(*cmd, seams, parsed.has("--simulate"), parsed.has("--json"));
    std::cout.flush();
    int code = cmd->run(parsed, ctx);
    std::cout.flush();
    say_notices(seams);
    return code;
  } catch (const Error& e) {
    say_notices(seams);
    return report_error(e, has_json_flag(args));
  } catch (const std::exception& e) {
    return report_error(Error(kExitError, std::string("internal error: ") + e.what()), has_json_flag(args));
  }
}

}  // namespace

namespace gpumap {

int cli_main(const std::vector<std::string>& args, const Environment& env, const std::string& program) {
  return check_stdout(run_main(args, env, program));
}

}  // namespace gpumap
