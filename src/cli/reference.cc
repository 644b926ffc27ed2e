// The command table (cli/command.h) as data for the man page, __describe and the completion
// scripts: what output/manual.h renders.  A table, kept beside the commands, not in a command file.
#include <algorithm>

#include "cli/command.h"
#include "cli/version.h"
#include "model/env_vars.h"
#include "model/exit_codes.h"
#include "output/manual.h"
#include "output/query_csv.h"

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
                          c.subcommands, c.positional_value, common_options_refused(c)});
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

}  // namespace gpumap
