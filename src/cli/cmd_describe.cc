// gpumap __describe: the command table as data (JSON), or what is generated from it: the man
// page and the bash/zsh completion scripts (the build writes these with it), and the bundled
// host names (the completion scripts ask for them).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/version.h"
#include "model/error.h"
#include "output/manual.h"

namespace gpumap {
namespace {

OptionDoc option_doc(const OptionSpec& o) {
  OptionDoc d;
  d.name = o.name;
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

int run(const Args& args, Context& ctx) {
  std::string format = args.value("--format").value_or("json");
  if (args.has("--json")) format = "json";
  CliReference r = cli_reference();
  std::ostringstream out;
  if (format == "json") out << reference_json(r).dump(2) << "\n";
  else if (format == "man") out << man_page(r);
  else if (format == "bash") out << bash_completion(r);
  else if (format == "zsh") out << zsh_completion(r);
  else if (format == "hosts")
    for (const std::string& h : bundled_hosts(ctx.seams())) out << h << "\n";
  else
    throw Error(kExitUsage, "__describe: --format `" + format + "` is not one of json, man, bash, zsh, hosts");
  std::optional<std::string> path = args.value("--output");
  if (!path) {
    std::cout << out.str();
    return kExitOk;
  }
  // Written beside and renamed, so a failed build never leaves half a man page behind.
  std::string tmp = *path + ".tmp";
  std::ofstream f(tmp, std::ios::binary);
  f << out.str();
  f.close();
  if (!f || std::rename(tmp.c_str(), path->c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(kExitError, "__describe: cannot write `" + *path + "`");
  }
  return kExitOk;
}

}  // namespace

std::vector<ExitCodeDoc> exit_code_docs() {
  return {
      {kExitOk, "ok", "success (map also exits 0 when it reports that CUDA would fail: the report succeeded)"},
      {kExitError, "driver/OS error", "a driver call or the OS failed at run time"},
      {kExitUsage, "usage", "usage: unknown option or command, bad value, bad or unknown host file, bad GPU argument"},
      {kExitNoDriver, "no driver",
       "no driver: libnvidia-ml.so.1 or libcuda.so.1 cannot be loaded, a required symbol is missing, or nvmlInit failed"},
      {kExitMismatch, "verify mismatch or snapshot differs",
       "verify: the visible GPUs differ from --expect; map --check: prediction and driver disagree; "
       "snapshot diff, verify --snapshot: the host differs from the snapshot"},
      {kExitCudaWouldFail, "CUDA would fail", "verify: cuInit would fail in this environment"},
      {kExitUnavailable, "not enough GPUs", "pick, run, bind: not enough GPUs qualify (or --wait ran out)"},
      {kExitFindings, "doctor found errors", "doctor, job: at least one finding of severity error"},
      {kExitPartial, "job report partial",
       "job: a node of the job gave no report (no answer within --timeout, slurmd down, or its ps failed); the "
       "others are shown and it is named (an error finding still exits 7)"},
  };
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
    CommandDoc d{c.name, c.summary, c.usage, c.description, option_docs(c.options), c.positionals, false};
    d.runs_command = d.usage.find("-- CMD") != std::string::npos;
    r.commands.push_back(d);
  }
  r.exit_codes = exit_code_docs();
  r.environment = {
      {"CUDA_VISIBLE_DEVICES", "the GPUs CUDA may use, and their order; what gpumap reads and explains"},
      {"CUDA_DEVICE_ORDER", "FASTEST_FIRST (CUDA's default) or PCI_BUS_ID (nvidia-smi's order)"},
      {"NVIDIA_VISIBLE_DEVICES", "the container runtime's GPU selection"},
      {"LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, ...",
       "launcher variables that explain, doctor and bind read"},
      {"GPUMAP_SIMULATE", "like --simulate"},
      {"GPUMAP_CACHE_DIR", "the folder of the per-boot cache of the driver's device order"},
      {"GPUMAP_LOCK_DIR", "the lease folder of run (default /tmp/gpumap-leases)"},
      {"GPUMAP_HOSTS_DIR", "where bundled host names are looked up first"},
      {"GPUMAP_SIM_LIBDIR", "the folder of the simulated driver libraries"},
      {"GPUMAP_IN_CONTAINER", "1 or 0 forces container detection (tests)"},
      {"GPUMAP_PROC_ROOT, GPUMAP_NVML_PID_NS", "test seams for ps"},
      {"GPUMAP_TRACE", "1: print the time of each NVML call to stderr"},
      {"GPUMAP_FAKE_HOST", "given by gpumap to its CUDA probe child for the simulated libcuda; not for users"},
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
          "gpumap __describe [--format json|man|bash|zsh|hosts] [--output FILE]",
          "Internal.  The build generates the man page and the shell completion from this output; the\n"
          "completion scripts ask it for the bundled host names.",
          {{"--format", true, false, "json|man|bash|zsh|hosts", "what to print (default json)"},
           {"--output", true, false, "FILE", "write it to FILE instead of standard output"}},
          false,
          run,
          true};
}

}  // namespace gpumap
