// gpumap doctor: every rule (docs/findings.md) against this environment; exit 7 on an error.
#include <algorithm>
#include <iostream>

#include "cli/command.h"
#include "session/diagnose.h"  // combined_fix
#include "session/explain.h"
#include "model/error.h"
#include "output/render.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  const Snapshot& s = ctx.session().snapshot();
  Mapping m = ctx.session().mapping(env, args.has("--probe"));
  std::vector<Finding> fs = environment_findings(ctx.session(), env, m);
  // A reminder true of every list, said on every run: only when asked for (-v).
  if (!args.has("--verbose"))
    fs.erase(std::remove_if(fs.begin(), fs.end(), [](const Finding& f) { return f.id == "ordinals-are-relative"; }), fs.end());
  if (auto cache = cache_finding(ctx.session())) fs.push_back(*cache);  // every run pays cuInit again
  std::string all_at_once = combined_fix(ctx.session(), env, fs);
  int errors = 0, warnings = 0, infos = 0;
  for (const Finding& f : fs) {
    if (f.severity == Severity::kError) ++errors;
    else if (f.severity == Severity::kWarning) ++warnings;
    else ++infos;
  }
  int code = errors ? kExitFindings : kExitOk;
  if (ctx.json()) {
    Json j = document(s);
    j["environment"] = environment_json(env);
    j["findings"] = findings_json(fs);
    j["counts"] = {{"error", errors}, {"warning", warnings}, {"info", infos}};
    j["combined_fix"] = all_at_once.empty() ? Json(nullptr) : Json(all_at_once);  // one line for every fix above
    j["ok"] = errors == 0;
    std::cout << dump(j);
    return code;
  }
  std::cout << host_banner(s);
  if (fs.empty()) std::cout << "\nNo traps found: cuda:N numbering is what it looks like.\n";
  else std::cout << render_findings(fs);
  // Never wrapped: it is pasted.
  if (!all_at_once.empty()) std::cout << "\nAll the fixes above in one line:\n  " << all_at_once << "\n";
  // The severities' own words, as the tags and --json's counts say them ("note" is a finding's line).
  std::cout << "\n" << errors << " error(s), " << warnings << " warning(s), " << infos << " info\n";
  return code;
}

}  // namespace

Command doctor_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back(probe_option());
  opts.push_back(watch_option());
  opts.push_back({"--verbose", false, false, "", "show every info finding, also the reminders true of any list (ordinals-are-relative)", {"-v"}});
  return {"doctor", "check the environment for every known GPU-numbering trap",
          "gpumap doctor [--json] [--env NAME=VALUE]... [--unset NAME]... [--probe] [--watch SECONDS] [-v]",
          "Runs every rule in docs/findings.md against this environment (or the one given with\n"
          "--env/--unset): CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER mistakes, launcher and Slurm\n"
          "variables, container and MIG traps.  Each finding has an id, a severity, the evidence and\n"
          "a fix to paste; findings of one cause are one finding (the others its \"also\" lines),\n"
          "and where several findings have fixes a last line fixes them all at once.  Exit 7 when any finding is an error, 0 otherwise.",
          opts, false, [](const Args& a, Context& c) { return run_watchable(a, c, run); }};
}

}  // namespace gpumap
