#include "findings/process_rules.h"

#include <set>

#include "env/device_value.h"
#include "env/launcher.h"
#include "resolve/cuda_rules.h"
#include "resolve/framework_view.h"
#include "model/text.h"
#include "model/uuid.h"

namespace gpumap {
namespace {

constexpr const char* kVariables[] = {"CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES"};

std::string value_words(const std::optional<std::string>& v) {
  if (!v) return "unset";
  return v->empty() ? "'' (empty)" : "\"" + printable(*v) + "\"";
}


/// "cuda:0 is nvidia-smi GPU 1 (GPU-...), cuda:1 is ..."; "no GPU" for none.
std::string devices_words(const Snapshot& s, const std::vector<std::string>& uuids) {
  if (uuids.empty()) return "no GPU";
  std::vector<std::string> parts;
  for (size_t i = 0; i < uuids.size(); ++i) parts.push_back("cuda:" + std::to_string(i) + " = " + s.describe_with_uuid(uuids[i]));
  return join(parts, ", ");
}

bool same_devices(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_uuid_hex(a[i], b[i])) return false;
  return true;
}

/// The command relaunched with the variables as they are now: `env -u NAME` for one unset now
/// but set at start, NAME=VALUE for one set now.  "" when the command line is unknown.
std::string relaunch_fix(const ProcessCudaFacts& f) {
  if (f.command.empty()) return "";
  std::string unset, assign;
  for (const char* name : kVariables) {
    std::optional<std::string> now = f.now.get(name);
    if (now) assign += std::string(name) + "=" + shell_word(*now) + " ";
    else if (!f.start || f.start->get(name)) unset += std::string(" -u ") + name;
  }
  std::string line = unset.empty() ? assign : "env" + unset + " " + assign;
  for (size_t i = 0; i < f.command.size(); ++i) line += (i ? " " : "") + shell_word(f.command[i]);
  return line;
}

/// A program whose command line cannot simply run again: a Jupyter kernel (`python -m
/// ipykernel_launcher -f ...json`: rerun, it is an orphan kernel no notebook talks to), a program read
/// from stdin (`python3 -`, or an interpreter with no script: rerun, it waits on stdin), IPython.
bool interactive(const std::vector<std::string>& cmd) {
  for (const std::string& a : cmd)
    if (a.find("ipykernel") != std::string::npos || a.find("colab_kernel_launcher") != std::string::npos) return true;
  if (cmd.empty()) return false;
  std::string prog = cmd[0].substr(cmd[0].rfind('/') == std::string::npos ? 0 : cmd[0].rfind('/') + 1);
  if (prog.rfind("ipython", 0) == 0 || prog.rfind("jupyter", 0) == 0) return true;
  if (prog.rfind("python", 0) != 0) return false;
  for (size_t i = 1; i < cmd.size(); ++i) {
    const std::string& a = cmd[i];
    if (a == "-") return true;                                    // the program is stdin
    if (a == "-c" || a == "-m") return false;                     // a command or a module: runs again
    if (a == "-i") return true;                                   // interactive after the script
    if (a == "-X" || a == "-W" || a == "--check-hash-based-pycs") { ++i; continue; }
    if (a.rfind("-", 0) == 0) continue;                           // -u, -O, -E, -B ...
    return false;                                                 // a script
  }
  return true;  // no script: the interactive interpreter
}

/// The first cell of a restarted kernel (or interpreter): the variables as they are now, set before
/// anything imports torch.
std::string first_cell(const ProcessCudaFacts& f) {
  std::string code;
  for (const char* name : kVariables) {
    std::optional<std::string> now = f.now.get(name);
    std::string stmt = now ? "os.environ[\"" + std::string(name) + "\"] = \"" + *now + "\""
                           : (!f.start || f.start->get(name)) ? "os.environ.pop(\"" + std::string(name) + "\", None)" : "";
    if (!stmt.empty()) code += (code.empty() ? "" : "; ") + stmt;
  }
  return "import os; " + code;
}

}  // namespace

std::optional<Finding> set_too_late(const Snapshot& s, const ProcessCudaFacts& f) {
  if (!f.live) return std::nullopt;
  bool predicted_ok = f.predicted && f.predicted_error.empty() && f.predicted->view.error == CudaInitError::kNone;
  if (predicted_ok && same_devices(f.predicted->view.uuids, f.mapping.view.uuids)) return std::nullopt;
  std::vector<std::string> vars;
  for (const char* name : kVariables) {
    std::optional<std::string> now = f.now.get(name);
    std::optional<std::string> start = f.start ? f.start->get(name) : std::nullopt;
    if (!now && f.start && !start) continue;  // unset then and now: not the cause
    vars.push_back(std::string(name) + " is " + value_words(now) + " now (at start: " +
                   (f.start ? value_words(start) : std::string("unknown")) + ")");
  }
  std::string would;
  if (predicted_ok) would = "the values now would give " + devices_words(s, f.predicted->view.uuids);
  else if (!f.predicted_error.empty()) would = "the values now cannot be predicted (" + f.predicted_error + ")";
  else
    would = std::string("the values now would make CUDA fail (") +
            cuda_error_name(f.predicted ? f.predicted->view.error : CudaInitError::kOther) +
            (f.predicted && !f.predicted->view.error_reason.empty() ? ": " + f.predicted->view.error_reason : "") + ")";
  Finding fd;
  fd.id = "set-too-late";
  fd.severity = Severity::kError;
  fd.message = "CUDA started in this process before its variables took their current values (" +
               (vars.empty() ? std::string("both unset") : join(vars, "; ")) +
               "). CUDA reads them once, when it starts: it really uses " + devices_words(s, f.mapping.view.uuids) +
               ", while " + would + ". Setting them now changes nothing";
  // pytorch#159641: torch's device_count() parses the value as it is now (through NVML), so torch
  // and the CUDA it drives disagree, or agree on a count while CUDA stays on the old GPUs.
  std::vector<std::string> nvml;
  for (const Gpu& g : s.gpus) nvml.push_back(g.uuid);
  TorchView t = predict_torch_view(nvml, f.now.get("CUDA_VISIBLE_DEVICES"));
  std::optional<unsigned> torch_now = torch_device_count(t, f.mapping.view);
  size_t live = f.mapping.view.uuids.size();
  if (!torch_now)
    fd.message += "; torch.cuda.device_count() now raises " + t.raises;
  else if (*torch_now != live)
    fd.message += "; torch.cuda.device_count() reads the value now and says " + std::to_string(*torch_now) +
                  " while CUDA has " + std::to_string(live) + ": `.to(\"cuda\")` and set_device fail with "
                  "`Invalid device id` or `No CUDA GPUs are available` (pytorch#159641: the count was fixed when "
                  "torch._C._cuda_getDeviceCount() ran, as flash-attention's import does)";
  else
    fd.message += "; torch.cuda.device_count() agrees on " + std::to_string(live) +
                  ", so nothing fails: the model just runs on the GPUs above (pytorch#159641: the count was fixed "
                  "when torch._C._cuda_getDeviceCount() ran, as flash-attention's import does)";
  // A kernel or a stdin program: restarting it is the fix, never its command line run again.
  if (predicted_ok && interactive(f.command)) {
    fd.note = "restart the kernel (or the interpreter) and set the variables in the first cell, before `import torch`: " +
              first_cell(f);
    return fd;
  }
  if (predicted_ok) fd.fix = relaunch_fix(f);
  fd.note = predicted_ok
                ? "or set them before anything starts CUDA: gpumap.pin() or os.environ at the very top, before "
                  "`import torch`; under a launcher put them on its command line (`gpumap run -- CMD`)"
                : "the values now name no usable GPU: remove the late assignment, or name the GPUs you mean "
                  "(`gpumap which GPU...` prints the value) and set it before CUDA starts";
  return fd;
}

std::optional<size_t> device_ordinal(const std::string& device) {
  // An hf_device_map value reaches here as text: "3" is the int 3 (env/device_value.h reads the rest).
  bool digits = !device.empty() && device.size() <= 9;
  for (char c : device) digits = digits && c >= '0' && c <= '9';
  if (digits) return static_cast<size_t>(std::stoul(device));
  return device_value_of_text(device).cuda_ordinal;
}


namespace {

ProgramInput program_input(const Snapshot& s, const std::vector<std::string>& visible, const Environment& now,
                           const ProgramFacts& p) {
  ProgramInput in{s, visible, now, p};
  for (const auto& [dev, n] : p.tensor_devices)
    if (auto o = device_ordinal(dev); o && n > 0) in.model_ordinals.insert(*o);
  if (p.hf_device_map)
    for (const auto& [module, dev] : *p.hf_device_map) {
      ++in.modules;
      if (auto o = device_ordinal(dev)) in.model_ordinals.insert(*o);
      else if (dev == "cpu") ++in.offloaded_cpu;
      else if (dev == "disk") ++in.offloaded_disk;
    }
  return in;
}

std::optional<size_t> ordinal_of(const ProgramInput& in, const std::string& uuid) {
  for (size_t i = 0; i < in.visible.size(); ++i)
    if (same_uuid_hex(in.visible[i], uuid)) return i;
  return std::nullopt;
}

std::string cuda_words(const ProgramInput& in, size_t o) {
  return "cuda:" + std::to_string(o) +
         (o < in.visible.size() ? " (" + in.s.describe_with_uuid(in.visible[o]) + ")" : " (which does not exist here)");
}

// stray-context: memory where neither the current device nor the model is.
std::optional<RuleVerdict> stray_context(const ProgramInput& in) {
  std::set<size_t> used = in.model_ordinals;
  if (in.p.current_device) used.insert(static_cast<size_t>(*in.p.current_device));
  if (!in.p.memory_known || used.empty()) return std::nullopt;
  std::vector<std::string> strays;
  for (const auto& [uuid, mib] : in.p.memory_mib) {
    if (mib == 0) continue;
    std::optional<size_t> o = ordinal_of(in, uuid);
    if (o && used.count(*o)) continue;
    strays.push_back(std::to_string(mib) + " MiB on " + in.s.describe_with_uuid(uuid) +
                     (o ? " = its cuda:" + std::to_string(*o) : std::string(", not one of its CUDA devices")));
  }
  if (strays.empty()) return std::nullopt;
  std::vector<std::string> mine;
  for (size_t o : used) mine.push_back("cuda:" + std::to_string(o));
  return RuleVerdict{"this process holds " + join(strays, "; ") + ", a GPU that is neither its current device nor one its "
                     "model uses (" + join(mine, ", ") + "): something touched CUDA there before torch.cuda.set_device "
                     "(each such context costs hundreds of MiB, and on another rank's GPU it competes with that rank)",
                     "call torch.cuda.set_device(LOCAL_RANK) first, before any .cuda()/torch.cuda call or a library that "
                     "initialises CUDA at import; or narrow each rank to its GPU (`gpumap bind -- CMD`)"};
}

// local-rank-device-mismatch: rank r sees more than r GPUs but works elsewhere than cuda:r.
std::optional<RuleVerdict> local_rank_device_mismatch(const ProgramInput& in) {
  LauncherEnv launcher = parse_launcher_env(in.now);
  const LocalRank* r = launcher.rank();
  size_t seen = in.visible.size();
  if (!r || !r->value || seen <= *r->value || seen <= 1) return std::nullopt;
  size_t want = *r->value;
  std::vector<std::string> wrong;
  if (in.p.current_device && static_cast<size_t>(*in.p.current_device) != want)
    wrong.push_back("its current device is " + cuda_words(in, static_cast<size_t>(*in.p.current_device)));
  if (!in.model_ordinals.empty() && !in.model_ordinals.count(want)) {
    std::vector<std::string> on;
    for (size_t o : in.model_ordinals) on.push_back(cuda_words(in, o));
    wrong.push_back("its model is on " + join(on, ", "));
  }
  if (wrong.empty()) return std::nullopt;
  return RuleVerdict{r->variable + "=" + std::to_string(want) + " and this process sees " + std::to_string(seen) +
                         " GPUs, but " + join(wrong, " and ") + ": local rank " + std::to_string(want) + " should use " +
                         cuda_words(in, want) + "; ranks that all use one cuda:N share one GPU",
                     "torch.cuda.set_device(int(os.environ[\"" + r->variable + "\"])) before any CUDA work, and "
                     "device=f\"cuda:{local_rank}\"; or narrow each rank to its own GPU (`gpumap bind -- CMD`), then cuda:0"};
}

// device-not-visible: an hf_device_map value or a max_memory key names cuda:N, and this process
// has no cuda:N (the keys and values are CUDA ordinals of this process, not nvidia-smi indices:
// the check the Python package's check_device_map and check_max_memory make, given to diagnose).
std::optional<RuleVerdict> device_not_visible(const ProgramInput& in) {
  const std::vector<std::string>& visible = in.visible;
  std::vector<std::string> missing;   // "hf_device_map["embed"] = 4"
  std::set<size_t> missing_ordinals;
  if (in.p.hf_device_map)
    for (const auto& [module, dev] : *in.p.hf_device_map)
      if (auto o = device_ordinal(dev); o && *o >= visible.size()) {
        missing.push_back("hf_device_map[\"" + printable(module) + "\"] = " + printable(dev));
        missing_ordinals.insert(*o);
      }
  for (const auto& [key, size] : in.p.max_memory)
    if (auto o = device_ordinal(key); o && *o >= visible.size()) {
      missing.push_back("max_memory key " + printable(key));
      missing_ordinals.insert(*o);
    }
  if (missing.empty()) return std::nullopt;
  std::vector<std::string> meant;  // nvidia-smi GPU N that is visible here under another ordinal
  for (size_t o : missing_ordinals)
    for (size_t i = 0; i < visible.size(); ++i)
      if (in.s.nvml_index_of(visible[i]) == static_cast<int>(o))
        meant.push_back("nvidia-smi GPU " + std::to_string(o) + " is cuda:" + std::to_string(i) + " here: use " +
                        std::to_string(i));
  std::vector<std::string> ords;
  for (size_t o : missing_ordinals) ords.push_back("cuda:" + std::to_string(o));
  std::string seen = std::to_string(visible.size()) + " GPU" + (visible.size() == 1 ? "" : "s") +
                     (visible.empty()       ? ""
                      : visible.size() == 1 ? std::string(", cuda:0")
                                            : ", cuda:0.." + std::to_string(visible.size() - 1));
  return RuleVerdict{join(missing, ", ") + ": " + join(ords, ", ") + (missing_ordinals.size() == 1 ? " does" : " do") +
                         " not exist here (this process sees " + seen +
                         "): device_map values and max_memory keys are CUDA ordinals of this process, not nvidia-smi indices",
                     meant.empty() ? "build them with gpumap.max_memory({GPU: size}) or from gpumap.devices()"
                                   : join(meant, "; ") + " (gpumap.max_memory({GPU: size}) builds max_memory from physical GPUs)"};
}

// model-on-cpu: GPUs are visible, yet not one tensor of the model is on one (transformers 5.17 then
// sets no hf_device_map at all: measured, cuda-env-semantics.md section 9).
std::optional<RuleVerdict> model_on_cpu(const ProgramInput& in) {
  uint64_t tensors = 0, cuda_tensors = 0;
  for (const auto& [dev, n] : in.p.tensor_devices) {
    tensors += n;
    if (device_ordinal(dev)) cuda_tensors += n;
  }
  if (tensors == 0 || cuda_tensors > 0 || in.visible.empty()) return std::nullopt;
  std::vector<std::string> where;
  for (const auto& [dev, n] : in.p.tensor_devices) where.push_back(std::to_string(n) + " on " + printable(dev));
  return RuleVerdict{"the model has no tensor on a GPU (" + join(where, ", ") + ") although this process sees " +
                         std::to_string(in.visible.size()) + " GPU(s), cuda:0 = " + in.s.describe_with_uuid(in.visible[0]) +
                         ": it runs on the CPU (a device_map or max_memory that left no room on the GPUs, or a missing .to(\"cuda\"))",
                     "model.to(\"cuda:0\"), or from_pretrained(..., device_map={\"\": 0}); with device_map=\"auto\" give the GPUs "
                     "room in max_memory (gpumap.max_memory({GPU: size}))"};
}

// offloaded-modules: accelerate put part of the model on the CPU or disk.
std::optional<RuleVerdict> offloaded_modules(const ProgramInput& in) {
  if (in.offloaded_cpu + in.offloaded_disk == 0) return std::nullopt;
  std::vector<std::string> where;
  if (in.offloaded_cpu) where.push_back(std::to_string(in.offloaded_cpu) + " on cpu");
  if (in.offloaded_disk) where.push_back(std::to_string(in.offloaded_disk) + " on disk");
  std::vector<std::string> limits;
  for (const auto& [k, v] : in.p.max_memory) limits.push_back(printable(k) + ": " + printable(v));
  return RuleVerdict{std::to_string(in.offloaded_cpu + in.offloaded_disk) + " of " + std::to_string(in.modules) +
                         " modules of the device_map are offloaded (" + join(where, ", ") +
                         "): they run from host memory, many times slower" +
                         (limits.empty() ? std::string(" (the GPUs had too little room)")
                                         : " (max_memory was {" + join(limits, ", ") + "})"),
                     "give the GPUs more room in max_memory (its keys are CUDA ordinals: gpumap.max_memory({GPU: size}) "
                     "builds it from physical GPUs), use more GPUs, or a smaller dtype"};
}

}  // namespace

const std::vector<ProgramRule>& program_rules() {
  static const std::vector<ProgramRule> table = {
      {"stray-context", Severity::kWarning, stray_context},
      {"local-rank-device-mismatch", Severity::kError, local_rank_device_mismatch},
      {"device-not-visible", Severity::kError, device_not_visible},
      {"model-on-cpu", Severity::kWarning, model_on_cpu},
      {"offloaded-modules", Severity::kWarning, offloaded_modules},
  };
  return table;
}

std::vector<Finding> program_findings(const Snapshot& s, const std::vector<std::string>& visible,
                                      const Environment& now, const ProgramFacts& p) {
  ProgramInput in = program_input(s, visible, now, p);
  std::vector<Finding> out;
  for (const ProgramRule& rule : program_rules())
    if (std::optional<RuleVerdict> v = rule.check(in))
      out.push_back({rule.id, rule.severity, std::move(v->message), "", std::move(v->note)});
  return out;
}

}  // namespace gpumap
