// The command-line reference as data, and what is generated from it: the JSON description
// (`gpumap __describe`), the man page, and the bash, zsh and fish completion scripts.  The CLI
// fills a CliReference from its command table, so none of these is a second list to drift.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/snapshot.h"

namespace gpumap {

struct OptionDoc {
  std::string name;                  // "--simulate"
  std::vector<std::string> aliases;  // "-h"
  bool takes_value = false;
  bool repeatable = false;
  std::string value_name;  // "HOST", "N", "env|uuid|index" (choices), "FILE", "GPU" (the host's GPUs)
  std::string help;
  /// The words a comma list of its value is made of (--query-gpu's fields): completed item by item.
  std::vector<std::string> values = {};
};

struct CommandDoc {
  std::string name, summary, usage, description;
  std::vector<OptionDoc> options;  // its own, besides the common options
  bool positionals = false;        // takes arguments (which GPU...)
  bool runs_command = false;       // `-- CMD [ARGS...]` (run, bind)
  std::vector<std::string> subcommands = {};  // the first argument's words (snapshot: save, diff)
  std::string positional_value = "";          // "GPU": its arguments are GPUs (which), completed as such
  /// The common options it refuses (top, metrics, serve: "--json"): no listing shows them for it.
  std::vector<std::string> common_refused = {};
};

struct ExitCodeDoc {
  int code;
  std::string brief;    // "usage" (for --help's one line)
  std::string meaning;  // the full sentence (man page)
  /// The commands that exit with it (from the command table); empty: any command.
  std::vector<std::string> commands = {};
};

struct EnvVarDoc {
  std::string name, meaning;
  /// Who reads it ("environment": the environment reasoned about, which --env and --unset
  /// complete; "seams", "terminal", "command", "probe child").  The first one groups it.
  std::vector<std::string> read_by;
};

struct CliReference {
  std::string program = "gpumap";
  std::string version, commit, commit_date;
  std::string summary;
  std::string default_command;       // what runs without a command ("map")
  std::vector<OptionDoc> top_options;     // only before any command: --version, --help
  std::vector<OptionDoc> common_options;  // every command takes these but its CommandDoc::common_refused
  std::vector<CommandDoc> commands;       // the visible ones, in --help order
  std::vector<ExitCodeDoc> exit_codes;
  std::vector<EnvVarDoc> environment;
  /// The man page's ENVIRONMENT subsections: a reader ("seams") and its heading.
  std::vector<std::pair<std::string, std::string>> environment_groups;
  std::vector<std::pair<std::string, std::string>> files;        // path, what it holds
  std::vector<std::string> see_also;                             // "nvidia-smi(1)"
};

/// The reference as JSON (the stable shape `gpumap __describe --json` prints).
nlohmann::ordered_json reference_json(const CliReference& r);

/// A man(7) page: NAME, SYNOPSIS, DESCRIPTION, COMMANDS (a subsection per command with its
/// options), COMMON OPTIONS, EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO.  ASCII only: other
/// characters become \[uXXXX] escapes, so `groff -ww -z` is clean without preconv.
std::string man_page(const CliReference& r);

/// `__describe --format FORMAT` for the reference's own formats: json (reference_json, indented),
/// man, bash, zsh, fish; nullopt for any other.
std::optional<std::string> reference_text(const CliReference& r, const std::string& format);

/// What a GPU argument may be, one word a line, for the completion: the nvidia-smi indices, then
/// the GPU UUIDs, then the MIG devices' (NVML only: no CUDA probe, quick enough for a Tab).
std::string completion_gpu_words(const Snapshot& s);

/// A bash completion script defining _gpumap and `complete -F _gpumap gpumap`.  Needs only
/// bash (bash-completion's helpers are used when loaded, for the command after `--`).
/// Bundled host names come from `gpumap __describe --format hosts` at completion time, and a GPU
/// argument's words (nvidia-smi indices, GPU and MIG UUIDs) from `gpumap __describe --format gpus`
/// on the host of the command line's --simulate (else $GPUMAP_SIMULATE, else the real driver).
std::string bash_completion(const CliReference& r);

/// A zsh completion function file (#compdef gpumap), built on _arguments.
std::string zsh_completion(const CliReference& r);

/// A fish completion script (`complete -c gpumap ...`), for fish's vendor_completions.d.
std::string fish_completion(const CliReference& r);

/// A usage line wrapped at spaces outside brackets to `width` columns, the lines after the first
/// indented to align after "PROGRAM COMMAND " (at most 16 columns); lines joined with '\n'.
std::string wrap_synopsis(const std::string& usage, size_t width);

/// Hand-wrapped prose (a command's description, an option's help) filled again to `width`
/// columns, as --help prints it.  The lines of a paragraph are joined and filled; a break is kept
/// at a blank line, before a line that starts with a space (an example, a table: kept as written)
/// or with "- " (a list item: its further lines hang by two), and where a line ends a sentence or
/// a colon and the next starts a new thought (an upper-case letter, '-', '`', '$').  A sentence's
/// two spaces stay two inside a line.  A word is never split: one wider than `width` has a line
/// of its own.  Lines joined with '\n', no trailing newline.
std::string fill_text(const std::string& text, size_t width);

/// `text` with `n` spaces after each newline (a filled block under a column).
std::string indent_lines(const std::string& text, size_t n);

/// Escapes text for roff: backslashes, hyphens of options, leading dots/quotes, non-ASCII.
std::string roff_escape(const std::string& text);

}  // namespace gpumap
