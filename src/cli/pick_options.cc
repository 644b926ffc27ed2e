// The pick options that `gpumap pick` and `gpumap run` share, and the request they describe.
#include "cli/pick_options.h"

#include "model/error.h"
#include "model/text.h"

namespace gpumap {

std::vector<OptionSpec> pick_options() {
  return {
      {"--gpus", true, false, "N", "how many GPUs (default 1)"},
      {"--min-free-mib", true, false, "MIB", "only GPUs with at least this much free memory"},
      {"--max-util", true, false, "PERCENT", "only GPUs at most this busy"},
      {"--include", true, true, "GPU", "only these GPUs: nvidia-smi index, UUID (prefix), PCI bus id, or MIG device UUID (repeatable, or comma-separated)"},
      {"--exclude", true, true, "GPU", "never these GPUs (repeatable, or comma-separated)"},
      {"--allow-busy", false, false, "", "also pick GPUs that run other processes (ranked after idle ones)"},
      {"--allow-unknown", false, false, "",
       "also pick GPUs whose process list or utilisation the driver could not read (ranked after idle ones)"},
  };
}

namespace {

/// Each value's GPUs; Error(kExitUsage) for a value that names none (`--include ""` from an
/// empty shell variable would otherwise mean "any GPU").
std::vector<std::string> split_specs(const std::vector<std::string>& values, const std::string& option) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::vector<std::string> parts = split_gpu_specs(v);
    if (parts.empty())
      throw Error(kExitUsage, option + " `" + v + "` names no GPU",
                  "give nvidia-smi indices, UUIDs (or unique prefixes), MIG device UUIDs or PCI bus ids: " + option +
                      " 0,1");
    out.insert(out.end(), parts.begin(), parts.end());
  }
  return out;
}

}  // namespace

PickRequest pick_request(const Args& args) {
  PickRequest r;
  if (auto n = args.integer("--gpus", kBoundGpus)) r.count = static_cast<int>(*n);
  if (auto m = args.integer("--min-free-mib", kBoundMinFreeMib)) r.min_free_mib = static_cast<uint64_t>(*m);
  if (auto u = args.integer("--max-util", kBoundMaxUtil)) r.max_util = static_cast<uint32_t>(*u);
  r.include = split_specs(args.values("--include"), "--include");
  r.exclude = split_specs(args.values("--exclude"), "--exclude");
  r.allow_busy = args.has("--allow-busy");
  r.allow_unknown = args.has("--allow-unknown");
  r.names = {.gpus = "--gpus", .wait = "--wait SECONDS", .allow_busy = "--allow-busy", .allow_unknown = "--allow-unknown",
             .include = "--include", .exclude = "--exclude", .limits = "--include/--exclude/--min-free-mib"};
  return r;
}

}  // namespace gpumap
