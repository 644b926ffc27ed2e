#include "output/manual.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "model/text.h"
#include "output/style.h"

namespace gpumap {
namespace {

using OJson = nlohmann::ordered_json;

// How an option's value is completed, read from its value name (the one --help shows).
// kGpuList: GPU or GPU[,GPU...] (every GPU option takes a comma list); kWords: a comma list of
// OptionDoc::values.
enum class ValueKind { kNone, kHost, kChoices, kFile, kDir, kEnvName, kEnvAssign, kGpuList, kWords };

ValueKind value_kind(const OptionDoc& o) {
  if (!o.takes_value) return ValueKind::kNone;
  const std::string& v = o.value_name;
  if (!o.values.empty()) return ValueKind::kWords;
  if (v == "GPU" || v.rfind("GPU[,", 0) == 0) return ValueKind::kGpuList;
  if (v == "HOST") return ValueKind::kHost;
  if (v.find('|') != std::string::npos) return ValueKind::kChoices;
  if (v == "FILE" || v == "PATH") return ValueKind::kFile;
  if (v == "DIR") return ValueKind::kDir;
  if (v == "NAME") return ValueKind::kEnvName;
  if (v == "NAME=VALUE") return ValueKind::kEnvAssign;
  return ValueKind::kNone;
}

std::vector<std::string> choices(const std::string& value_name) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t bar; (bar = value_name.find('|', start)) != std::string::npos; start = bar + 1)
    out.push_back(value_name.substr(start, bar - start));
  out.push_back(value_name.substr(start));
  return out;
}

OJson option_json(const OptionDoc& o) {
  return {{"name", o.name},
          {"aliases", o.aliases},
          {"takes_value", o.takes_value},
          {"repeatable", o.repeatable},
          {"value_name", o.value_name},
          {"help", o.help},
          {"values", o.values}};
}

OJson options_json(const std::vector<OptionDoc>& opts) {
  OJson a = OJson::array();
  for (const OptionDoc& o : opts) a.push_back(option_json(o));
  return a;
}

// The common options a command takes: all but those it refuses.
std::vector<OptionDoc> common_taken(const CliReference& r, const CommandDoc& c) {
  std::vector<OptionDoc> out;
  for (const OptionDoc& o : r.common_options)
    if (std::find(c.common_refused.begin(), c.common_refused.end(), o.name) == c.common_refused.end()) out.push_back(o);
  return out;
}

// The options a command accepts, its own first, then the common ones it takes.
std::vector<OptionDoc> all_options(const CliReference& r, const CommandDoc& c) {
  std::vector<OptionDoc> out = c.options;
  std::vector<OptionDoc> common = common_taken(r, c);
  out.insert(out.end(), common.begin(), common.end());
  return out;
}

std::vector<std::string> option_words(const std::vector<OptionDoc>& opts) {
  std::vector<std::string> out;
  for (const OptionDoc& o : opts) {
    out.push_back(o.name);
    out.insert(out.end(), o.aliases.begin(), o.aliases.end());
  }
  return out;
}

// The variables gpumap reasons about (read by "environment"): what --env and --unset complete.
std::vector<std::string> known_env_names(const CliReference& r) {
  std::vector<std::string> out;
  for (const EnvVarDoc& v : r.environment)
    if (std::find(v.read_by.begin(), v.read_by.end(), "environment") != v.read_by.end()) out.push_back(v.name);
  return out;
}

const CommandDoc* default_command(const CliReference& r) {
  for (const CommandDoc& c : r.commands)
    if (c.name == r.default_command) return &c;
  return nullptr;
}

// What completes before any command: the default command's options and the top options.
std::vector<OptionDoc> first_options(const CliReference& r) {
  const CommandDoc* def = default_command(r);
  std::vector<OptionDoc> out = def ? all_options(r, *def) : r.common_options;
  out.insert(out.end(), r.top_options.begin(), r.top_options.end());
  return out;
}

// The options that may come before the command (`gpumap --simulate dgx8 which 2`: main.cc moves
// them after it): every common option but --help, which shows the help instead.
std::vector<OptionDoc> leading_options(const CliReference& r) {
  std::vector<OptionDoc> out;
  for (const OptionDoc& o : r.common_options)
    if (o.name != "--help") out.push_back(o);
  return out;
}

// "a|b|c" of the leading options that take a value (takes_value) or not, for a shell `case`.
std::string leading_pattern(const CliReference& r, bool takes_value, const std::string& sep, const std::string& suffix = "") {
  std::vector<std::string> names;
  for (const OptionDoc& o : leading_options(r))
    if (o.takes_value == takes_value) names.push_back(o.name + suffix);
  return join(names, sep);
}

// ---- roff ----

std::string roff_line(const std::string& line) {
  std::string e = roff_escape(line);
  if (!e.empty() && (e[0] == '.' || e[0] == '\'')) e = "\\&" + e;
  return e;
}

// Each line escaped; a blank line starts a new paragraph.
std::string roff_text(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    out += line.empty() ? ".PP\n" : roff_line(line) + "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

/// An option name: every dash a minus sign ("\-\-min\-free\-mib"), so a pasted option is ASCII.
std::string roff_option_name(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '-' ? std::string("\\-") : roff_escape(std::string(1, c));
  return "\\fB" + out + "\\fR";
}

std::string roff_option_tag(const OptionDoc& o) {
  std::string tag;
  for (const std::string& a : o.aliases) tag += roff_option_name(a) + ", ";
  tag += roff_option_name(o.name);
  if (o.takes_value) tag += " \\fI" + roff_escape(o.value_name) + "\\fR";
  return tag;
}

std::string roff_options(const std::vector<OptionDoc>& opts) {
  std::string out;
  for (const OptionDoc& o : opts) {
    bool says_it = o.help.find("repeatable") != std::string::npos;
    out += ".TP\n" + roff_option_tag(o) + "\n" + roff_line(o.help) + (o.repeatable && !says_it ? " (repeatable)" : "") +
           "\n";
  }
  return out;
}

// ---- shells ----

std::string sh_single_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string bash_value_action(const CliReference& r, const OptionDoc& o) {
  switch (value_kind(o)) {
    case ValueKind::kHost:
      return "COMPREPLY=($(compgen -W \"$(_gpumap_hosts)\" -- \"$cur\") $(compgen -f -X '!*.json' -- \"$cur\") "
             "$(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null";
    case ValueKind::kChoices:
      return "COMPREPLY=($(compgen -W " + sh_single_quote(join(choices(o.value_name), " ")) + " -- \"$cur\"))";
    case ValueKind::kFile:
      return "COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null";
    case ValueKind::kDir:
      return "COMPREPLY=($(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null";
    case ValueKind::kEnvName:  // the variables gpumap knows, and the shell's exported ones
      return "COMPREPLY=($(compgen -W " + sh_single_quote(join(known_env_names(r), " ")) +
             " -e -- \"$cur\" | LC_ALL=C sort -u))";
    case ValueKind::kEnvAssign:
      return "COMPREPLY=($(compgen -W " + sh_single_quote(join(known_env_names(r), " ")) +
             " -e -S = -- \"$cur\" | LC_ALL=C sort -u)); compopt -o nospace 2>/dev/null";
    case ValueKind::kGpuList:  // the list's last item
      return "_gpumap_list \"$(_gpumap_gpus)\"";
    case ValueKind::kWords:
      return "_gpumap_list " + sh_single_quote(join(o.values, " "));
    case ValueKind::kNone:
      break;
  }
  return "COMPREPLY=()";  // a number, seconds, a user: nothing to offer
}

// The `case $cmd in ... esac` arm of one command: values of its options, then its option words.
std::string bash_command_arm(const CliReference& r, const std::string& pattern, const std::vector<OptionDoc>& opts,
                             const std::vector<std::string>& subcommands = {}, const std::string& positional = "") {
  std::string s = "    " + pattern + ")\n      case $prev in\n";
  for (const OptionDoc& o : opts)
    if (o.takes_value) s += "        " + o.name + ") " + bash_value_action(r, o) + "; return 0 ;;\n";
  s += "      esac\n";
  if (positional == "GPU")
    s += "      if [[ $cur != -* ]]; then COMPREPLY=($(compgen -W \"$(_gpumap_gpus)\" -- \"$cur\")); return 0; fi\n";
  if (!subcommands.empty())
    s += "      if (( COMP_CWORD == first )) && [[ $cur != -* ]]; then\n"
         "        COMPREPLY=($(compgen -W " + sh_single_quote(join(subcommands, " ")) + " -- \"$cur\")); return 0\n"
         "      fi\n";
  s += "      opts=" + sh_single_quote(join(option_words(opts), " ")) + " ;;\n";
  return s;
}

std::string zsh_escape_help(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '[' || c == ']' || c == '\\' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

std::string zsh_value_action(const OptionDoc& o) {
  switch (value_kind(o)) {
    case ValueKind::kHost: return "_gpumap_hosts";
    case ValueKind::kChoices: return "(" + join(choices(o.value_name), " ") + ")";
    case ValueKind::kFile: return "_files";
    case ValueKind::kDir: return "_files -/";
    case ValueKind::kEnvName: return "_gpumap_env";
    case ValueKind::kEnvAssign: return "_gpumap_env =";
    case ValueKind::kGpuList: return "_sequence _gpumap_gpus";
    case ValueKind::kWords: return "_sequence compadd - " + join(o.values, " ");
    case ValueKind::kNone: break;
  }
  return " ";  // shows the value name, offers nothing
}

// _arguments specs, one per option name or alias, each a quoted shell word.
std::vector<std::string> zsh_specs(const std::vector<OptionDoc>& opts) {
  std::vector<std::string> out;
  for (const OptionDoc& o : opts) {
    std::vector<std::string> names = o.aliases;
    names.push_back(o.name);
    for (const std::string& n : names) {
      std::string spec = (o.repeatable ? "*" : "") + n + (o.takes_value ? "=" : "") + "[" + zsh_escape_help(o.help) + "]";
      if (o.takes_value) spec += ":" + zsh_escape_help(o.value_name) + ":" + zsh_value_action(o);
      out.push_back(sh_single_quote(spec));
    }
  }
  return out;
}

std::string zsh_arguments(const std::vector<OptionDoc>& opts, const std::string& extra) {
  std::string s = "      _arguments -S :";
  for (const std::string& spec : zsh_specs(opts)) s += " \\\n        " + spec;
  if (!extra.empty()) s += " \\\n        " + extra;
  return s + "\n";
}

}  // namespace

std::string roff_escape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      // A minus (option dash) unless it joins two word characters ("start-up").
      bool joins = i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1])) && i + 1 < text.size() &&
                   std::isalnum(static_cast<unsigned char>(text[i + 1]));
      out += joins ? "-" : "\\-";
    } else if (c == '`') {
      out += "\\(ga";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // UTF-8 sequence -> \[uXXXX]; an invalid byte becomes U+FFFD.
      int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      unsigned cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0F : c & 0x1F;
      bool ok = len > 1 && i + len <= text.size();
      for (int k = 1; ok && k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(text[i + k]);
        ok = (cc & 0xC0) == 0x80;
        cp = (cp << 6) | (cc & 0x3F);
      }
      if (!ok) cp = 0xFFFD, len = 1;
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", cp);
      out += buf;
      i += len - 1;
    }
  }
  return out;
}

nlohmann::ordered_json reference_json(const CliReference& r) {
  OJson cmds = OJson::array();
  for (const CommandDoc& c : r.commands) {
    OJson common = OJson::array();  // the names of the common options it takes
    for (const OptionDoc& o : common_taken(r, c)) common.push_back(o.name);
    cmds.push_back({{"name", c.name},
                    {"summary", c.summary},
                    {"usage", c.usage},
                    {"description", c.description},
                    {"options", options_json(c.options)},
                    {"common_options", common},
                    {"positionals", c.positionals},
                    {"runs_command", c.runs_command},
                    {"subcommands", c.subcommands},
                    {"positional_value", c.positional_value}});
  }
  OJson exits = OJson::array();
  for (const ExitCodeDoc& e : r.exit_codes)
    exits.push_back({{"code", e.code}, {"brief", e.brief}, {"meaning", e.meaning}, {"commands", e.commands}});
  OJson env = OJson::array();
  for (const EnvVarDoc& v : r.environment) env.push_back({{"name", v.name}, {"meaning", v.meaning}, {"read_by", v.read_by}});
  OJson files = OJson::array();
  for (const auto& [path, what] : r.files) files.push_back({{"path", path}, {"meaning", what}});
  return {{"program", r.program},
          {"version", r.version},
          {"commit", r.commit},
          {"commit_date", r.commit_date},
          {"summary", r.summary},
          {"default_command", r.default_command},
          {"top_options", options_json(r.top_options)},
          {"common_options", options_json(r.common_options)},
          {"commands", cmds},
          {"exit_codes", exits},
          {"environment", env},
          {"files", files},
          {"see_also", r.see_also}};
}

std::string man_page(const CliReference& r) {
  std::string upper;
  for (char c : r.program) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string s = ".\\\" Generated from " + r.program + "'s command table by `" + r.program +
                  " __describe --format man`; do not edit.\n";
  s += ".TH " + upper + " 1 \"" + r.commit_date + "\" \"" + r.program + " " + r.version + "\" \"User Commands\"\n";
  s += ".nh\n";  // no hyphenation: option and variable names stay whole, so they paste
  s += ".SH NAME\n" + r.program + " \\- " + roff_line(r.summary) + "\n";
  s += ".SH SYNOPSIS\n.B " + r.program + "\n[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]\n";
  for (const OptionDoc& o : r.top_options) s += ".br\n.B " + r.program + "\n" + roff_option_tag(o) + "\n";
  s += ".SH DESCRIPTION\n.B " + r.program + "\nshows " + roff_line(r.summary) + ".\n.PP\nWith no command, " +
       r.program + " runs \\fB" + r.default_command + "\\fR. The commands:\n";
  size_t width = 0;
  for (const CommandDoc& c : r.commands) width = std::max(width, c.name.size());
  for (const CommandDoc& c : r.commands)
    s += ".TP " + std::to_string(width + 2) + "\n.B " + c.name + "\n" + roff_line(c.summary) + "\n";
  s += ".SH COMMANDS\n";
  for (const CommandDoc& c : r.commands) {
    // Unfilled, so wrapped here: man indents a subsection's text by 7 columns of 80.
    s += ".SS " + c.name + "\n.nf\n" + roff_text(wrap_synopsis(c.usage, 72)) + ".fi\n.PP\n" + roff_text(c.description);
    if (!c.options.empty()) s += ".PP\nOptions:\n" + roff_options(c.options);
    if (!c.common_refused.empty()) s += ".PP\nTakes no " + roff_line(join(c.common_refused, ", no ")) + ".\n";
  }
  // Each common option says which commands refuse it, from the same table the parser reads.
  std::vector<OptionDoc> common = r.common_options;
  for (OptionDoc& o : common) {
    std::vector<std::string> not_by;
    for (const CommandDoc& c : r.commands)
      if (std::find(c.common_refused.begin(), c.common_refused.end(), o.name) != c.common_refused.end()) not_by.push_back(c.name);
    if (!not_by.empty()) o.help += " (not " + join(not_by, ", ") + ")";
  }
  s += ".SH COMMON OPTIONS\nEvery command takes these, unless the option says otherwise:\n" + roff_options(common);
  s += ".PP\nWithout a command:\n" + roff_options(r.top_options);
  s += ".SH EXIT STATUS\n";
  for (const ExitCodeDoc& e : r.exit_codes)
    s += ".TP\n.B " + std::to_string(e.code) + "\n" + roff_line(e.meaning) +
         (e.commands.empty() ? "" : " (" + roff_line(join(e.commands, ", ")) + ")") + "\n";
  s += ".SH ENVIRONMENT\n";
  for (const auto& [reader, heading] : r.environment_groups) {
    s += ".SS " + roff_line(heading) + "\n";
    for (const EnvVarDoc& v : r.environment)
      if (!v.read_by.empty() && v.read_by[0] == reader)
        s += ".TP\n.B " + roff_escape(v.name) + "\n" + roff_line(v.meaning) + "\n";
  }
  if (!r.files.empty()) {
    s += ".SH FILES\n";
    for (const auto& [path, what] : r.files) s += ".TP\n.I " + roff_escape(path) + "\n" + roff_line(what) + "\n";
  }
  if (!r.see_also.empty()) {
    s += ".SH SEE ALSO\n";
    for (size_t i = 0; i < r.see_also.size(); ++i) {
      const std::string& ref = r.see_also[i];
      size_t paren = std::min(ref.find('('), ref.size());  // "nvidia-smi(1)"
      s += ".BR " + roff_escape(ref.substr(0, paren)) + " \"" + ref.substr(paren) + (i + 1 < r.see_also.size() ? "," : "") +
           "\"\n";
    }
  }
  return s;
}

std::string bash_completion(const CliReference& r) {
  std::vector<std::string> command_names;
  for (const CommandDoc& c : r.commands) command_names.push_back(c.name);
  std::vector<OptionDoc> first_opts = first_options(r);

  std::string s = "# bash completion for " + r.program + " " + r.version + ": generated from its command table by `" +
                  r.program + " __describe --format bash`; do not edit.\n\n";
  s += "# The bundled simulated hosts, asked from the gpumap being completed.\n"
       "_gpumap_hosts() {\n"
       "  local exe=${COMP_WORDS[0]}\n"
       "  [[ $exe == \"~/\"* ]] && exe=$HOME/${exe#\"~/\"}\n"
       "  \"$exe\" __describe --format hosts 2>/dev/null\n"
       "}\n\n"
       "# The GPUs a GPU argument may name (nvidia-smi indices, GPU and MIG UUIDs), asked from the gpumap\n"
       "# being completed, on the command line's --simulate host if it has one.\n"
       "_gpumap_gpus() {\n"
       "  local exe=${COMP_WORDS[0]} i sim=()\n"
       "  [[ $exe == \"~/\"* ]] && exe=$HOME/${exe#\"~/\"}\n"
       "  for (( i = 1; i < COMP_CWORD; i++ )); do\n"
       "    case ${COMP_WORDS[i]} in\n"
       "      --simulate=*) sim=(\"${COMP_WORDS[i]}\") ;;\n"
       "      --simulate)\n"
       "        if [[ ${COMP_WORDS[i+1]} == = ]]; then sim=(--simulate \"${COMP_WORDS[i+2]}\")\n"
       "        else sim=(--simulate \"${COMP_WORDS[i+1]}\")\n"
       "        fi ;;\n"
       "    esac\n"
       "  done\n"
       "  \"$exe\" __describe --format gpus \"${sim[@]}\" 2>/dev/null\n"
       "}\n\n"
       "# A comma list (GPU[,GPU...], FIELDS): the words $1 for its last item, the items before kept.\n"
       "_gpumap_list() {\n"
       "  local pre=\n"
       "  [[ $cur == *,* ]] && pre=${cur%,*},\n"
       "  COMPREPLY=($(compgen -P \"$pre\" -W \"$1\" -- \"${cur##*,}\"))\n"
       "  compopt -o nospace 2>/dev/null\n"
       "}\n\n";
  const std::string flags = leading_pattern(r, false, "|"), valued = leading_pattern(r, true, "|");
  const std::string valued_eq = leading_pattern(r, true, "|", "=*");
  s += "_gpumap() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd=" + r.default_command + " first=1 c=1 i opts\n"
       "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
       "  # --opt=VALUE: bash splits the word at '='.\n"
       "  if [[ $cur == = ]]; then cur=\n"
       "  elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then prev=${COMP_WORDS[COMP_CWORD-2]}\n"
       "  fi\n"
       "  # Options every command takes may come before it (gpumap --simulate HOST COMMAND): c is the\n"
       "  # command's word.\n"
       "  while (( c < COMP_CWORD )); do\n"
       "    case ${COMP_WORDS[c]} in\n"
       "      " + flags + "|" + valued_eq + ") (( c++ )) ;;\n"
       "      " + valued + ")\n"
       "        if [[ ${COMP_WORDS[c+1]} == = ]]; then (( c + 3 <= COMP_CWORD )) || break; (( c += 3 ))\n"
       "        else (( c + 2 <= COMP_CWORD )) || break; (( c += 2 ))\n"
       "        fi ;;\n"
       "      *) break ;;\n"
       "    esac\n"
       "  done\n"
       "  if (( COMP_CWORD == c )) && [[ $cur != -* ]]; then\n"
       "    COMPREPLY=($(compgen -W " + sh_single_quote(join(command_names, " ") + " help") + " -- \"$cur\"))\n"
       "    return 0\n"
       "  fi\n"
       "  if [[ ${COMP_WORDS[c]} != -* ]] && (( COMP_CWORD > c )); then cmd=${COMP_WORDS[c]} first=$(( c + 1 )); fi\n"
       "  # After `--` comes the command to run.\n"
       "  for (( i = first; i < COMP_CWORD; i++ )); do\n"
       "    [[ ${COMP_WORDS[i]} == -- ]] || continue\n"
       "    if declare -F _command_offset >/dev/null; then _command_offset $(( i + 1 ))\n"
       "    elif (( i + 1 == COMP_CWORD )); then COMPREPLY=($(compgen -c -- \"$cur\"))\n"
       "    else COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null\n"
       "    fi\n"
       "    return 0\n"
       "  done\n"
       "  (( COMP_CWORD == c )) && cmd=__first\n"
       "  case $cmd in\n";
  s += bash_command_arm(r, "__first", first_opts);
  for (const CommandDoc& c : r.commands)
    s += bash_command_arm(r, c.name, all_options(r, c), c.subcommands, c.positional_value);
  s += "    help)\n"
       "      (( COMP_CWORD == first )) && COMPREPLY=($(compgen -W " + sh_single_quote(join(command_names, " ")) +
       " -- \"$cur\"))\n"
       "      return 0 ;;\n"
       "    *) return 0 ;;\n"
       "  esac\n"
       "  [[ $cur == -* ]] && COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
       "  return 0\n"
       "}\n\n"
       "complete -F _gpumap " + r.program + "\n";
  return s;
}

std::string zsh_completion(const CliReference& r) {
  std::vector<OptionDoc> first_opts = first_options(r);

  std::string s = "#compdef " + r.program + "\n# zsh completion for " + r.program + " " + r.version +
                  ": generated from its command table by `" + r.program + " __describe --format zsh`; do not edit.\n\n";
  s += "# The bundled simulated hosts, asked from the gpumap being completed, and host files.\n"
       "_gpumap_hosts() {\n"
       "  local -a hosts\n"
       "  hosts=(${(f)\"$($_gpumap_exe __describe --format hosts 2>/dev/null)\"})\n"
       "  _alternative 'hosts:bundled host:compadd -a hosts' 'files:host file:_files -g \"*.json\"'\n"
       "}\n\n"
       "# --env NAME=VALUE (\"_gpumap_env =\") and --unset NAME: the variables gpumap knows, then exported ones.\n"
       "_gpumap_env() {\n"
       "  local -a known suffix\n"
       "  known=(" + join(known_env_names(r), " ") + ")\n"
       "  [[ -n $1 ]] && suffix=(-qS \"$1\")\n"
       "  local ret=1\n"
       "  _wanted gpumap-variables expl 'variable gpumap knows' compadd \"${suffix[@]}\" -a known && ret=0\n"
       "  _parameters -g '*export*' \"${suffix[@]}\" && ret=0\n"
       "  return ret\n"
       "}\n\n";
  s += "# The GPUs a GPU argument may name (nvidia-smi indices, GPU and MIG UUIDs), asked from the gpumap\n"
       "# being completed, on the command line's --simulate host if it has one (compadd's options: $@).\n"
       "_gpumap_gpus() {\n"
       "  local -a gpus sim\n"
       "  local i=${words[(I)--simulate]} j=${words[(I)--simulate=*]}\n"
       "  (( i && i < CURRENT )) && sim=(--simulate ${(Q)words[i+1]})\n"
       "  (( j && j < CURRENT )) && sim=(${(Q)words[j]})\n"
       "  gpus=(${(f)\"$($_gpumap_exe __describe --format gpus $sim 2>/dev/null)\"})\n"
       "  compadd \"$@\" -a gpus\n"
       "}\n\n";
  s += "_gpumap() {\n"
       "  local _gpumap_exe=${~words[1]}\n"
       "  local -a cmds\n"
       "  cmds=(\n";
  for (const CommandDoc& c : r.commands) s += "    " + sh_single_quote(c.name + ":" + zsh_escape_help(c.summary)) + "\n";
  s += "    'help:show the help of a command'\n  )\n";
  s += "  # Options every command takes may come before it (gpumap --simulate HOST COMMAND): c is the\n"
       "  # command's word.\n"
       "  local c=2\n"
       "  while (( c < CURRENT )); do\n"
       "    case $words[c] in\n"
       "      " + leading_pattern(r, false, "|") + "|" + leading_pattern(r, true, "|", "=*") + ") (( c++ )) ;;\n"
       "      " + leading_pattern(r, true, "|") + ") (( c + 2 <= CURRENT )) || break; (( c += 2 )) ;;\n"
       "      *) break ;;\n"
       "    esac\n"
       "  done\n"
       "  if (( CURRENT == c )) && [[ $PREFIX != -* ]]; then\n"
       "    _describe -t commands '" + r.program + " command' cmds\n"
       "    return\n"
       "  fi\n"
       "  local cmd=__first\n"
       "  if (( CURRENT > c )); then\n"
       "    cmd=" + r.default_command + "\n"
       "    # The command's word out, the options before it kept: _arguments reads them as its own.\n"
       "    if [[ $words[c] != -* ]]; then cmd=$words[c]; words[c]=(); (( CURRENT-- )); fi\n"
       "  fi\n"
       "  # After `--` comes the command to run.\n"
       "  local dd=${words[(i)--]}\n"
       "  if [[ $cmd != __first ]] && (( dd < CURRENT )); then\n"
       "    shift $dd words; (( CURRENT -= dd )); _normal; return\n"
       "  fi\n"
       "  case $cmd in\n";
  s += "    __first)\n" + zsh_arguments(first_opts, "") + "      ;;\n";
  for (const CommandDoc& c : r.commands) {
    std::string extra;
    if (c.runs_command) extra = "'--[the command to run follows]'";
    else if (!c.subcommands.empty()) extra = "'1:subcommand:(" + join(c.subcommands, " ") + ")' '*:argument:_files'";
    else if (c.positional_value == "GPU") extra = "'*:GPU:_gpumap_gpus'";
    else if (c.positionals) extra = "'*:argument: '";
    s += "    " + c.name + ")\n" + zsh_arguments(all_options(r, c), extra) + "      ;;\n";
  }
  s += "    help)\n"
       "      (( CURRENT == c )) && _describe -t commands '" + r.program + " command' cmds\n"
       "      ;;\n"
       "  esac\n"
       "}\n\n"
       "_gpumap \"$@\"\n";
  return s;
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) out.push_back(text.substr(start, nl - start));
  out.push_back(text.substr(start));
  return out;
}

bool starts_new_thought(const std::string& prev, const std::string& next) {
  if (prev.empty() || next.empty()) return true;
  char end = prev.back(), first = next.front();
  if (end != '.' && end != ':') return false;
  return std::isupper(static_cast<unsigned char>(first)) || first == '-' || first == '`' || first == '$';
}

}  // namespace

std::string fill_text(const std::string& text, size_t width) {
  std::vector<std::string> lines = split_lines(text);
  std::vector<std::string> out;
  std::string para;  // the paragraph being gathered
  bool item = false;  // it is a "- " list item
  auto flush = [&] {
    if (!para.empty()) out.push_back(wrap(para, width, 0, item ? 2 : 0));  // style.h's, as prose elsewhere
    para.clear();
    item = false;
  };
  std::string prev;
  for (const std::string& l : lines) {
    bool verbatim = l.empty() || l[0] == ' ' || l[0] == '\t';
    bool list_item = l.rfind("- ", 0) == 0;
    if (item && l.size() > 2 && l.rfind("  ", 0) == 0 && l[2] != ' ') {  // a list item's next line
      para += (prev.back() == '.' ? "  " : " ") + l.substr(2);
      prev = l;
      continue;
    }
    if (verbatim) {
      flush();
      out.push_back(l);
    } else if (para.empty() || list_item || starts_new_thought(prev, l)) {
      flush();
      para = l;
      item = list_item;
    } else {
      // A line ending a sentence joins the next with the two spaces the text uses.
      para += (prev.back() == '.' ? "  " : " ") + l;
    }
    prev = verbatim ? std::string() : l;
  }
  flush();
  return join(out, "\n");
}

std::string indent_lines(const std::string& text, size_t n) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(n, ' ');
  }
  return out;
}

std::string wrap_synopsis(const std::string& usage_text, size_t width) {
  // A line that continues the form above (it starts with an option group) is part of it.
  std::string usage;
  for (const std::string& l : split_lines(usage_text)) {
    size_t lead = l.find_first_not_of(' ');
    bool continues = !usage.empty() && lead != std::string::npos && (l[lead] == '[' || l[lead] == '-');
    usage += usage.empty() ? l : continues ? " " + l.substr(lead) : "\n" + l;
  }
  std::string out;
  size_t start = 0;
  while (start <= usage.size()) {  // each line of a multi-line usage on its own
    size_t nl = usage.find('\n', start);
    std::string text = usage.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    std::vector<std::string> words;  // split at spaces outside [...] and (...)
    std::string word;
    int depth = 0;
    for (char c : text) {
      if (c == ' ' && depth == 0) {
        if (!word.empty()) words.push_back(word), word.clear();
        continue;
      }
      if (c == '[' || c == '(') ++depth;
      if ((c == ']' || c == ')') && depth > 0) --depth;
      word += c;
    }
    if (!word.empty()) words.push_back(word);
    size_t indent = words.size() > 1 ? std::min<size_t>(words[0].size() + words[1].size() + 2, 16) : 4;
    // A bracket group wider than a line is split at its own spaces.
    for (size_t i = 0; i < words.size(); ++i) {
      size_t sp = words[i].find(' ');
      if (words[i].size() + indent <= width || sp == std::string::npos) continue;
      std::string rest = words[i].substr(sp + 1);
      words[i].resize(sp);
      words.insert(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, rest);
    }
    std::string line;
    bool fresh = true;  // nothing but the indent on `line` yet
    for (const std::string& w : words) {
      if (!fresh && line.size() + 1 + w.size() > width) {
        out += line + "\n";
        line = std::string(indent, ' ');
        fresh = true;
      }
      line += (fresh ? "" : " ") + w;
      fresh = false;
    }
    out += line;
    if (nl == std::string::npos) break;
    out += "\n";
    start = nl + 1;
  }
  return out;
}

namespace {

// A fish single-quoted word: backslash and quote escaped.
std::string fish_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

// `complete` arguments for the value of an option: what fish offers after it.
std::string fish_value_args(const OptionDoc& o) {
  switch (value_kind(o)) {
    case ValueKind::kHost: return " -r -F -a '(__gpumap_hosts)'";
    case ValueKind::kChoices: return " -x -a " + fish_quote(join(choices(o.value_name), " "));
    case ValueKind::kFile: return " -r -F";
    case ValueKind::kDir: return " -x -a '(__fish_complete_directories (commandline -ct))'";
    case ValueKind::kEnvName: return " -x -a '(__gpumap_env)'";
    case ValueKind::kEnvAssign: return " -x -a '(__gpumap_env =)'";
    case ValueKind::kGpuList: return " -x -a '(__gpumap_list (__gpumap_gpus))'";
    case ValueKind::kWords: return " -x -a " + fish_quote("(__gpumap_list " + join(o.values, " ") + ")");
    case ValueKind::kNone: break;
  }
  return o.takes_value ? " -x" : "";
}

std::string fish_options(const std::string& condition, const std::vector<OptionDoc>& opts) {
  std::string s;
  for (const OptionDoc& o : opts) {
    std::string flags;
    for (const std::string& a : o.aliases)
      if (a.size() == 2 && a[0] == '-') flags += " -s " + a.substr(1);
    flags += " -l " + o.name.substr(2);
    for (const std::string& a : o.aliases)  // a long alias too (ps --query-compute-apps)
      if (a.size() > 2 && a.rfind("--", 0) == 0) flags += " -l " + a.substr(2);
    s += "complete -c gpumap -n " + fish_quote(condition) + flags + fish_value_args(o) + " -d " + fish_quote(o.help) + "\n";
  }
  return s;
}

}  // namespace

std::string fish_completion(const CliReference& r) {
  std::string p = r.program;
  std::string s = "# fish completion for " + p + " " + r.version + ": generated from its command table by `" + p +
                  " __describe --format fish`; do not edit.\n\n";
  std::string flags;  // the case words of those that take no value, and of --opt=VALUE (quoted: a wildcard)
  for (const OptionDoc& o : leading_options(r)) flags += " " + (o.takes_value ? fish_quote(o.name + "=*") : o.name);
  s += "# The words after gpumap, less the options every command takes that come before the command\n"
       "# (gpumap --simulate HOST COMMAND).\n"
       "function __gpumap_args\n"
       "    set -l w (commandline -opc)\n"
       "    set -e w[1]\n"
       "    while set -q w[1]\n"
       "        switch $w[1]\n"
       "            case" + flags + "\n"
       "                set -e w[1]\n"
       "            case " + leading_pattern(r, true, " ") + "\n"
       "                set -q w[2]; or break\n"
       "                set -e w[1..2]\n"
       "            case '*'\n"
       "                break\n"
       "        end\n"
       "    end\n"
       "    set -q w[1]; and printf '%s\\n' $w\n"
       "end\n\n"
       "# The command being completed: the first argument (after those options), or " + r.default_command +
       " when that is an option; nothing before it.\n"
       "function __gpumap_command\n"
       "    set -l w (__gpumap_args)\n"
       "    set -q w[1]; or return\n"
       "    if string match -q -- '-*' $w[1]\n"
       "        echo " + r.default_command + "\n"
       "    else\n"
       "        echo $w[1]\n"
       "    end\n"
       "end\n\n"
       "# After `--` comes the command to run (run, bind).\n"
       "function __gpumap_after_dd\n"
       "    contains -- -- (commandline -opc)\n"
       "end\n\n"
       "function __gpumap_using\n"
       "    __gpumap_after_dd; and return 1\n"
       "    set -l c (__gpumap_command)\n"
       "    test \"$c\" = \"$argv[1]\"\n"
       "end\n\n"
       "# The first word after gpumap (and the options before the command).\n"
       "function __gpumap_first\n"
       "    test (count (__gpumap_args)) -eq 0\n"
       "end\n\n"
       "# The word right after command $argv[1] (its subcommand).\n"
       "function __gpumap_second\n"
       "    set -l w (__gpumap_args)\n"
       "    test (count $w) -eq 1; and test \"$w[1]\" = \"$argv[1]\"\n"
       "end\n\n"
       "# The bundled simulated hosts, asked from the gpumap being completed.\n"
       "function __gpumap_hosts\n"
       "    set -l w (commandline -opc)\n"
       "    set -l exe (string replace -r '^~' -- $HOME $w[1])\n"
       "    $exe __describe --format hosts 2>/dev/null\n"
       "end\n\n"
       "# The GPUs a GPU argument may name (nvidia-smi indices, GPU and MIG UUIDs), asked from the gpumap\n"
       "# being completed, on the command line's --simulate host if it has one.\n"
       "function __gpumap_gpus\n"
       "    set -l w (commandline -opc)\n"
       "    set -l exe (string replace -r '^~' -- $HOME $w[1])\n"
       "    set -l sim\n"
       "    for i in (seq 2 (count $w))\n"
       "        if test \"$w[$i]\" = --simulate; and set -q w[(math $i + 1)]\n"
       "            set sim --simulate $w[(math $i + 1)]\n"
       "        else if string match -q -- '--simulate=*' $w[$i]\n"
       "            set sim $w[$i]\n"
       "        end\n"
       "    end\n"
       "    $exe __describe --format gpus $sim 2>/dev/null\n"
       "end\n\n"
       "# A comma list (GPU[,GPU...], FIELDS): the words given for its last item, the items before kept.\n"
       "function __gpumap_list\n"
       "    set -l cur (string replace -r -- '^--[^=]*=' '' (commandline -ct))\n"
       "    set -l pre (string replace -r -- '[^,]*$' '' $cur)\n"
       "    for w in $argv\n"
       "        echo $pre$w\n"
       "    end\n"
       "end\n\n"
       "# --env NAME=VALUE (`__gpumap_env =`) and --unset NAME: the variables gpumap knows, then exported ones.\n"
       "function __gpumap_env\n"
       "    set -l suffix ''\n"
       "    set -q argv[1]; and set suffix $argv[1]\n"
       "    set -l known " + join(known_env_names(r), " ") + "\n"
       "    for v in $known\n"
       "        printf '%s%s\\t%s\\n' $v $suffix 'gpumap knows it'\n"
       "    end\n"
       "    for v in (set -xn)\n"
       "        contains -- $v $known; or printf '%s%s\\t%s\\n' $v $suffix exported\n"
       "    end\n"
       "end\n\n"
       "function __gpumap_complete_command\n"
       "    set -l rest\n"
       "    set -l seen 0\n"
       "    for t in (commandline -opc)\n"
       "        if test $seen = 1\n"
       "            set -a rest $t\n"
       "        else if test \"$t\" = --\n"
       "            set seen 1\n"
       "        end\n"
       "    end\n"
       "    complete -C (string join ' ' -- (string escape -- $rest) (commandline -ct))\n"
       "end\n\n";
  s += "complete -c " + p + " -f\n";
  s += "complete -c " + p + " -n __gpumap_after_dd -x -a '(__gpumap_complete_command)'\n";
  for (const CommandDoc& c : r.commands)
    s += "complete -c " + p + " -n __gpumap_first -a " + c.name + " -d " + fish_quote(c.summary) + "\n";
  s += "complete -c " + p + " -n __gpumap_first -a help -d 'show the help of a command'\n";
  s += fish_options("__gpumap_first", first_options(r));
  for (const CommandDoc& c : r.commands) {
    s += "\n# " + c.name + "\n";
    for (const std::string& sub : c.subcommands)
      s += "complete -c " + p + " -n " + fish_quote("__gpumap_second " + c.name) + " -a " + sub + "\n";
    if (c.positional_value == "GPU")  // its arguments: the host's GPUs
      s += "complete -c " + p + " -n " + fish_quote("__gpumap_using " + c.name) + " -a '(__gpumap_gpus)'\n";
    s += fish_options("__gpumap_using " + c.name, all_options(r, c));
  }
  s += "\n# help\n";
  for (const CommandDoc& c : r.commands)
    s += "complete -c " + p + " -n '__gpumap_second help' -a " + c.name + " -d " + fish_quote(c.summary) + "\n";
  return s;
}

std::optional<std::string> reference_text(const CliReference& r, const std::string& format) {
  if (format == "json") return reference_json(r).dump(2) + "\n";
  if (format == "man") return man_page(r);
  if (format == "bash") return bash_completion(r);
  if (format == "zsh") return zsh_completion(r);
  if (format == "fish") return fish_completion(r);
  return std::nullopt;
}

std::string completion_gpu_words(const Snapshot& s) {
  std::string out;
  for (const Gpu& g : s.gpus) out += std::to_string(g.nvml_index) + "\n";
  for (const Gpu& g : s.gpus) out += g.uuid + "\n";
  for (const Gpu& g : s.gpus)
    for (const MigDevice& m : g.mig_devices) out += m.uuid + "\n";
  return out;
}

}  // namespace gpumap
