// gpumap __describe: the command table as data (JSON), or what is generated from it: the man
// page and the bash/zsh/fish completion scripts (the build writes these with it), and the bundled
// host names (the completion scripts ask for them).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/version.h"
#include "model/env_vars.h"
#include "model/error.h"
#include "model/exit_codes.h"
#include "output/manual.h"
#include "output/query_csv.h"
#include "session/output_file.h"

namespace gpumap {
namespace {

OptionDoc option_doc(const OptionSpec& o) {
  OptionDoc d;
  d.name = o.name;
  d.aliases = o.aliases;
  if (o.name == "--help") d.aliases = {"-h"};
  d.takes_value = o.takes_value;
  d.repeatable = o.repeatable;
  d.value_name = o.value_name;
  d.help = o.help;
  return d;
}

std::vector<OptionDoc> option_docs(const std::vector<OptionSpec>& specs) {
  std::vector<OptionDoc> out;
  for (const OptionSpec& o : specs) out.push_back(option_doc(o));
  return out;
}

/// What a GPU argument may be, one word a line, for the completion: the nvidia-smi indices, then
/// the GPU UUIDs, then the MIG devices' (NVML only: no CUDA probe, quick enough for a Tab).
std::string gpu_words(const Snapshot& s) {
  std::string out;
  for (const Gpu& g : s.gpus) out += std::to_string(g.nvml_index) + "\n";
  for (const Gpu& g : s.gpus) out += g.uuid + "\n";
  for (const Gpu& g : s.gpus)
    for (const MigDevice& m : g.mig_devices) out += m.uuid + "\n";
  return out;
}

int run(const Args& args, Context& ctx) {
  std::string format = args.value("--format").value_or("json");
  if (args.has("--json")) format = "json";
  CliReference r = cli_reference();
  std::ostringstream out;
  if (format == "json") out << reference_json(r).dump(2) << "\n";
  else if (format == "man") out << man_page(r);
  else if (format == "bash") out << bash_completion(r);
  else if (format == "zsh") out << zsh_completion(r);
  else if (format == "fish") out << fish_completion(r);
  else if (format == "hosts")
    for (const std::string& h : bundled_hosts(ctx.session().seams())) out << h << "\n";
  else if (format == "gpus")
    out << gpu_words(ctx.session().snapshot());
  else
    throw Error(kExitUsage, "__describe: --format `" + format + "` is not one of json, man, bash, zsh, fish, hosts, gpus");
  std::optional<std::string> path = args.value("--output");
  if (!path) {
    std::cout << out.str();
    return kExitOk;
  }
  // Written beside and renamed, so a failed build never leaves half a man page behind.
  write_output_file(*path, out.str(), "__describe --output", "give a writable path");
  return kExitOk;
}

}  // namespace

std::vector<ExitCodeDoc> exit_code_docs() {
  std::vector<ExitCodeDoc> out;
  for (const ExitCodeInfo& e : kExitCodes) {
    ExitCodeDoc d{e.code, e.brief, e.meaning};
    for (const Command& c : commands())
      if (!c.hidden && std::find(c.exit_codes.begin(), c.exit_codes.end(), e.code) != c.exit_codes.end())
        d.commands.push_back(c.name);
    out.push_back(d);
  }
  return out;
}

/// The table of variables (model/env_vars.h) for the man page, __describe and the completion.
static std::vector<EnvVarDoc> environment_docs() {
  std::vector<EnvVarDoc> out;
  for (const EnvVarInfo& v : kEnvVars) {
    EnvVarDoc d{v.name, v.meaning, {}};
    for (EnvReader r : kEnvReaders)
      if (v.readers & r) d.read_by.push_back(env_reader_name(r));
    out.push_back(d);
  }
  return out;
}

CliReference cli_reference() {
  CliReference r;
  r.version = GPUMAP_VERSION;
  r.commit = build_commit();
  r.commit_date = build_commit_date();
  r.summary = "which physical GPU your code will run on, and how to make it the one you meant";
  r.default_command = "map";
  r.top_options = {{"--version", {"-V"}, false, false, "", "print the version and the git commit it was built from"}};
  r.common_options = option_docs(common_options());
  for (const Command& c : commands()) {
    if (c.hidden) continue;
    r.commands.push_back({c.name, c.summary, c.usage, c.description, option_docs(c.options), c.positionals, c.runs_command,
                          c.subcommands, c.positional_value});
    // The fields of a CSV query, completed item by item.
    for (OptionDoc& o : r.commands.back().options) {
      if (o.name == "--query-gpu") o.values = query_field_names(QueryKind::kGpu);
      if (o.name == "--query") o.values = query_field_names(QueryKind::kProcess);
    }
  }
  r.exit_codes = exit_code_docs();
  r.environment = environment_docs();
  r.environment_groups = {
      {env_reader_name(kEnvReasoned), "The environment gpumap reasons about"},
      {env_reader_name(kEnvSeams), "gpumap's own settings"},
      {env_reader_name(kEnvTerminal), "Text output"},
      {env_reader_name(kEnvCommand), "Defaults of commands"},
      {env_reader_name(kEnvProbeChild), "Given to the CUDA probe child"},
  };
  r.files = {
      {"PREFIX/" GPUMAP_INSTALL_HOSTS_DIR "/*.json",
       "the bundled simulated hosts (PREFIX is the folder above the one holding gpumap: /usr for the Debian package)"},
      {"PREFIX/" GPUMAP_INSTALL_SIM_DIR "/",
       "the simulated driver: fake libnvidia-ml.so.1 and libcuda.so.1 serving a host file"},
      {"PREFIX/" GPUMAP_INSTALL_DOC_DIR "/",
       "the documentation: docs/cli.md (JSON contracts), docs/findings.md (every trap), docs/host-file.md"},
  };
  r.see_also = {"nvidia-smi(1)", "srun(1)", "mpirun(1)"};
  return r;
}

Command describe_command() {
  return {"__describe",
          "internal: the command table as JSON, man page, or completion script",
          "gpumap __describe [--format json|man|bash|zsh|fish|hosts|gpus] [--output FILE]",
          "Internal.  The build generates the man page and the shell completion from this output; the\n"
          "completion scripts ask it for the bundled host names and the host's GPUs.",
          {{"--format", true, false, "json|man|bash|zsh|fish|hosts|gpus", "what to print (default json)"},
           {"--output", true, false, "FILE", "write it to FILE instead of standard output"}},
          false,
          run,
          true};
}

}  // namespace gpumap
