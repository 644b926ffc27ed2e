#include "cli/args.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "model/error.h"
#include "model/text.h"
#include "output/manual.h"

namespace gpumap {

Args::Args(const std::string& command, const std::vector<OptionSpec>& specs, const std::vector<std::string>& argv,
           bool allow_positionals, bool runs_command)
    : command_(command) {
  auto usage = [&](const std::string& msg) {
    return Error(kExitUsage, command + ": " + msg, "see `gpumap " + command + " --help`");
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      saw_dashdash_ = true;
      rest_.assign(argv.begin() + static_cast<long>(i) + 1, argv.end());
      return;
    }
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && std::isdigit(static_cast<unsigned char>(a[1])))) {
      std::string name = a, val;
      bool inline_val = false;
      if (size_t eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
        name = a.substr(0, eq);
        val = a.substr(eq + 1);
        inline_val = true;
      }
      if (name == "-h") name = "--help";
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& s : specs)
        if (s.name == name || std::find(s.aliases.begin(), s.aliases.end(), name) != s.aliases.end()) spec = &s;
      if (spec) name = spec->name;
      if (!spec) {  // the closest option this command takes, as for commands
        std::vector<std::string> known;
        for (const OptionSpec& s : specs) {
          known.push_back(s.name);
          known.insert(known.end(), s.aliases.begin(), s.aliases.end());
        }
        throw usage("unknown option `" + name + "`" + did_you_mean(name, known));
      }
      if (spec->takes_value) {
        if (!inline_val) {
          if (i + 1 >= argv.size()) throw usage("`" + name + "` needs a value (" + spec->value_name + ")");
          // `--unset --json`: the next word is one of this command's options (or `--`), not a value.
          const std::string& next = argv[i + 1];
          std::string next_name = next.substr(0, next.find('='));
          bool is_option = next == "--" || next == "-h" || std::any_of(specs.begin(), specs.end(), [&](const OptionSpec& s) {
                             return s.name == next_name && next.rfind("--", 0) == 0;
                           });
          if (is_option)
            throw usage("`" + name + "` needs a value (" + spec->value_name + "), and `" + next +
                        "` is an option; write " + name + "=VALUE for a value that starts with --");
          val = argv[++i];
        }
      } else if (inline_val) {
        throw usage("`" + name + "` takes no value");
      }
      auto& v = values_[name];
      if (!v.empty() && !spec->repeatable && spec->takes_value) throw usage("`" + name + "` given twice");
      v.push_back(val);
      continue;
    }
    if (!allow_positionals && runs_command) {
      std::string cmd;
      for (size_t k = i; k < argv.size(); ++k) cmd += " " + argv[k];
      throw Error(kExitUsage, command + ": `" + a + "` is not an option of gpumap " + command + ": the command to run goes after `--`",
                  "gpumap " + command + " [options] --" + cmd);
    }
    if (!allow_positionals) throw usage("unexpected argument `" + a + "`");
    positionals_.push_back(a);
  }
}

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<long> Args::integer(const std::string& name, long min, long max) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end || n < min || n > max)
    throw Error(kExitUsage,
                command_ + ": " + name + " `" + *v + "` must be a whole number from " +
                    std::to_string(min) + " to " + std::to_string(max));
  return n;
}

std::optional<double> Args::number(const std::string& name, double min, double max) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  double n = std::strtod(v->c_str(), &end);
  if (v->empty() || *end || !(n >= min && n <= max))
    throw Error(kExitUsage, command_ + ": " + name + " `" + *v + "` must be a number from " + short_number(min) + " to " +
                                short_number(max));
  return n;
}

std::vector<OptionSpec> common_options() {
  return {
      {"--simulate", true, false, "HOST", "use a simulated host (bundled name or JSON file); also $GPUMAP_SIMULATE"},
      {"--json", false, false, "", "print JSON (the contract in docs/cli.md) instead of a table"},
      {"--wide", false, false, "", "full UUIDs and names, no wrapping (what a pipe gets); a terminal gets tables that fit"},
      {"--help", false, false, "", "show this help"},
  };
}

std::string format_options(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const OptionSpec& s : specs) {
    std::string left = "  ";
    for (const std::string& a : s.aliases) left += a + ", ";
    left += s.name + (s.takes_value ? " " + s.value_name : "");
    if (left.size() < 26) left.resize(26, ' ');
    else left += "\n" + std::string(26, ' ');
    out += left + indent_lines(fill_text(s.help, 80 - 26), 26) + "\n";  // --help fits 80 columns
  }
  return out;
}

}  // namespace gpumap
