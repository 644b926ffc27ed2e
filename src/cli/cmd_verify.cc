// gpumap verify --expect GPU[,GPU...]: exit 0 when cuda:0.. are exactly those GPUs.
#include <iostream>

#include "cli/command.h"
#include "findings/rules.h"
#include "model/error.h"
#include "output/render.h"
#include "resolve/gpu_selector.h"

namespace gpumap {
namespace {

std::string label(const Snapshot& s, const std::string& uuid) {
  return describe_uuid(s, uuid) + " (" + uuid + ")";
}

bool same_gpu(const std::string& a, const std::string& b) { return uuid_hex(a) == uuid_hex(b); }

int run(const Args& args, Context& ctx) {
  std::vector<std::string> specs = args.values("--expect");
  if (specs.empty())
    throw Error(kExitUsage, "verify needs --expect GPU[,GPU...]",
                "e.g. gpumap verify --expect 2,3   (nvidia-smi indices, UUIDs or PCI bus ids)");
  Environment env = apply_env_options(ctx.env(), args);
  const Snapshot& s = ctx.snapshot();
  std::vector<const Gpu*> want = select_gpus(s, specs);
  if (want.empty()) throw Error(kExitUsage, "--expect names no GPU", "e.g. gpumap verify --expect 0");
  bool prefix = args.has("--prefix");
  Mapping m = ctx.mapping(env, args.has("--probe"));
  const std::vector<std::string>& got = m.view.uuids;

  std::vector<std::string> diffs;
  int code = kExitOk;
  if (m.view.error != CudaInitError::kNone) {
    code = kExitCudaWouldFail;
    diffs.push_back(std::string("cuInit would fail with ") + cuda_error_name(m.view.error) + ": " + m.view.error_reason);
  } else {
    for (size_t i = 0; i < want.size(); ++i) {
      std::string n = "cuda:" + std::to_string(i);
      if (i >= got.size()) diffs.push_back(n + " does not exist; expected " + label(s, want[i]->uuid));
      else if (!same_gpu(got[i], want[i]->uuid))
        diffs.push_back(n + " is " + label(s, got[i]) + "; expected " + label(s, want[i]->uuid));
    }
    if (!prefix)
      for (size_t i = want.size(); i < got.size(); ++i)
        diffs.push_back("cuda:" + std::to_string(i) + " is " + label(s, got[i]) +
                        ", not expected (use --prefix to allow more visible GPUs)");
    if (!diffs.empty()) code = kExitMismatch;
  }
  if (ctx.json()) {
    Json j;
    j["ok"] = code == kExitOk;
    j["source"] = m.source;
    j["prefix"] = prefix;
    Json e = Json::array(), a = Json::array();
    for (const Gpu* g : want) e.push_back({{"nvml_index", g->nvml_index}, {"uuid", g->uuid}});
    for (const std::string& u : got) {
      int idx = nvml_index_of(s, u);
      a.push_back({{"nvml_index", idx >= 0 ? Json(idx) : Json(nullptr)}, {"uuid", u}});
    }
    j["expected"] = e;
    j["actual"] = a;
    j["error"] = m.view.error == CudaInitError::kNone ? Json(nullptr) : Json(cuda_error_name(m.view.error));
    j["differences"] = diffs;
    std::cout << dump(j);
    return code;
  }
  if (code == kExitOk) {
    std::cout << "OK: ";
    for (size_t i = 0; i < want.size(); ++i)
      std::cout << (i ? ", " : "") << "cuda:" << i << " = " << describe_uuid(s, want[i]->uuid);
    std::cout << (prefix && got.size() > want.size() ? " (and " + std::to_string(got.size() - want.size()) + " more visible)" : "")
              << "\n";
  } else {
    std::cout << (code == kExitCudaWouldFail ? "FAIL (CUDA would not initialise):\n" : "MISMATCH:\n");
    for (const std::string& d : diffs) std::cout << "  " << d << "\n";
  }
  return code;
}

}  // namespace

Command verify_command() {
  std::vector<OptionSpec> opts = env_options();
  opts.push_back({"--expect", true, true, "GPU[,GPU...]", "the physical GPUs cuda:0, cuda:1, ... must be, in order"});
  opts.push_back({"--prefix", false, false, "", "only cuda:0..n-1 must match; more visible GPUs are allowed"});
  opts.push_back(probe_option());
  return {"verify", "check that cuda:0.. are exactly the expected GPUs (for scripts)",
          "gpumap verify --expect GPU[,GPU...] [--prefix] [--probe] [--json] [--env NAME=VALUE]... [--unset NAME]...",
          "Checks that this environment's visible GPUs are exactly the expected physical GPUs in that\n"
          "order (GPU = nvidia-smi index, UUID or unique prefix, or PCI bus id).  By default the whole\n"
          "visible list must match; with --prefix only cuda:0..n-1 must, and more may be visible.\n"
          "Exit 0 on a match, 4 on a difference (printed), 5 when cuInit would fail, 2 on a bad GPU name.",
          opts, false, run};
}

}  // namespace gpumap
