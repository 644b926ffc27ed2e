// gpumap explain: entry by entry, what CUDA, the container runtime and the launcher do
// with the variables in force, in plain words, with the consequence.
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "model/error.h"
#include "model/text.h"
#include "output/render.h"
#include "output/self_view.h"
#include "session/explain.h"

namespace gpumap {
namespace {

int run(const Args& args, Context& ctx) {
  Environment env = apply_env_options(ctx, args);
  const Snapshot& s = ctx.session().snapshot();
  Explanation e = explain(ctx.session(), env, args.has("--probe"));
  const Mapping& m = e.mapping;
  const CudaView& v = m.view;
  if (ctx.json()) {
    Json j = document(s);
    j["environment"] = environment_json(env);
    j["explanation"] = e.lines;
    Json entries = Json::array();
    for (size_t i = 0; i < v.entries.size(); ++i) {
      const EntryDecision& d = v.entries[i];
      entries.push_back({{"position", i + 1},
                         {"raw", d.entry.raw},
                         {"outcome", entry_outcome_name(d.outcome)},
                         {"cuda_ordinal", d.cuda_ordinal ? Json(*d.cuda_ordinal) : Json(nullptr)},
                         {"uuid", d.uuid.empty() ? Json(nullptr) : Json(d.uuid)},
                         {"text", e.entry_texts[i]}});
    }
    j["entries"] = entries;
    j["cuda"] = mapping_json(s, m);
    j["findings"] = findings_json(e.findings);
    j["local_device"] = e.local_device ? local_device_json(*e.local_device) : Json(nullptr);
    std::cout << dump(j);
    return kExitOk;
  }
  std::cout << host_banner(s) << "\n";
  for (const std::string& l : e.lines) std::cout << fit_line(l);
  std::ostringstream out;  // quotes the host file's path, variables and UUIDs: printed printable
  out << "\nResult (" << m.source << "): ";
  if (v.error != CudaInitError::kNone)
    out << "cuInit fails with " << cuda_error_name(v.error) << " (" << v.error_reason << ")\n";
  else if (v.uuids.empty())
    out << "no GPU visible\n";
  else {
    out << "\n";
    for (size_t i = 0; i < v.uuids.size(); ++i)
      out << "  cuda:" << i << " = " << s.describe(v.uuids[i]) << " (" << v.uuids[i] << ")\n";
  }
  std::cout << printable_lines(out.str()) << render_findings(e.findings);
  return kExitOk;
}

}  // namespace

Command explain_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back(probe_option());
  return {"explain", "explain, entry by entry, what CUDA and the launchers do with the variables",
          "gpumap explain [--json] [--env NAME=VALUE]... [--unset NAME]... [--probe]",
          "Reads CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES (entry by entry, the way the driver reads\n"
          "it), NVIDIA_VISIBLE_DEVICES (the container runtime's variable) and the launcher variables\n"
          "(LOCAL_RANK, SLURM_*, ...) and says in plain words what each does and what follows from it,\n"
          "then the resulting cuda:N -> GPU mapping and the findings.",
          opts, false, run};
}

}  // namespace gpumap
