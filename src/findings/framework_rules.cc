// The framework layer's rules (issue 35): where torch, vLLM, Ray or code built on the nvidia-smi
// numbers read the same variables differently from the driver.  Each is backed by a measurement
// (docs/framework-rules.md; tests/vectors/framework/, docs/validation/2026-12-03-framework-view-1gpu.log).
#include <string>

#include "findings/rule_table.h"
#include "resolve/launch_env.h"
#include "model/text.h"
#include "model/uuid.h"
#include "resolve/framework_view.h"

namespace gpumap {
namespace {

// The GPUs the list meant (the same list every entry rule's fix writes), else the driver's list,
// as NVML's full UUIDs: what every reader agrees on (torch's parser, nvmlDeviceGetHandleByUUID,
// the driver).  "" when neither names a GPU.
std::string full_uuid_fix(const RuleInput& r) {
  std::string meant = meant_fix(r, CvdForm::kUuid, true);
  if (!meant.empty()) return meant;
  if (r.v.error != CudaInitError::kNone || r.v.uuids.empty()) return "";
  return "export CUDA_VISIBLE_DEVICES=" + join(r.v.uuids, ",") + gives_comment(r.s, r.v.uuids);
}

// vllm#51677, flashinfer#4901: code that hands a CUDA_VISIBLE_DEVICES entry to
// nvmlDeviceGetHandleByUUID finds nothing unless the entry is the whole UUID as NVML writes it
// (measured: a prefix, upper case, no dashes and trailing characters all give NVML_ERROR_NOT_FOUND).
void uuid_prefix_breaks_nvml_lookup(const RuleInput& r, Report& report) {
  if (r.v.error != CudaInitError::kNone) return;
  std::vector<std::string> partial;
  for (const EntryDecision& d : r.v.entries)
    if (d.outcome == EntryOutcome::kVisible && d.entry.kind == CvdEntryKind::kUuid && d.entry.raw != d.uuid)
      partial.push_back("`" + d.entry.raw + "` (" + d.uuid + ")");
  if (partial.empty()) return;
  report.add(Severity::kWarning,
             "CUDA_VISIBLE_DEVICES names " + join(partial, ", ") +
                 " by less or other than the whole UUID as NVML writes it: CUDA accepts that, but code that looks the "
                 "entry up in NVML (nvmlDeviceGetHandleByUUID: vLLM's engine start-up, flashinfer) gets "
                 "NVML_ERROR_NOT_FOUND and stops",
             full_uuid_fix(r));
}

// torch.cuda.device_count() parses CUDA_VISIBLE_DEVICES itself and counts through NVML.
void torch_count_differs(const RuleInput& r, Report& report) {
  // An invalid CUDA_DEVICE_ORDER fails cuInit whatever the list says; its own finding has the fix.
  if (r.v.order.order == DeviceOrder::kInvalid) return;
  // With MIG enabled CUDA lists MIG devices where NVML (and so torch's count) lists their GPU, and
  // torch's parser cannot express a list of both: not measured (MIG stays off on the GPU host), so
  // gpumap does not claim a count there.  map --json's torch object still says what the model gives.
  for (const Gpu& g : r.s.gpus)
    if (g.mig_enabled.value_or(false)) return;
  std::vector<std::string> nvml;
  for (const Gpu& g : r.s.gpus) nvml.push_back(g.uuid);
  TorchView t = predict_torch_view(nvml, r.in.env.get("CUDA_VISIBLE_DEVICES"));
  if (!torch_differs_from_driver(t, r.v)) return;
  unsigned driver = driver_device_count(r.v);
  std::optional<unsigned> n = torch_device_count(t, r.v);
  std::string torch_says = n ? "torch.cuda.device_count() says " + std::to_string(*n)
                             : "torch.cuda.device_count() raises " + t.raises;
  std::string effect =
      n ? (*n < driver ? "torch.cuda.is_available() still says True, so code goes on and fails at `.to(\"cuda\")` "
                         "with `Invalid device id`, or puts the model on the CPU (transformers' device_map=\"auto\")"
                       : "torch offers cuda:N that the driver does not have: using one fails")
        : "every torch.cuda call that checks a device id raises it too";
  std::string fix = full_uuid_fix(r);
  report.add(Severity::kWarning,
             torch_says + " but the driver gives " + std::to_string(driver) + " GPU" + (driver == 1 ? "" : "s") +
                 " here (" + t.reason + "); " + effect + " (torch 2.11; PYTORCH_NVML_BASED_CUDA_CHECK=1 makes "
                 "is_available() follow the same count)",
             fix, fix.empty() ? "name the GPUs by their full UUIDs (gpumap which prints the line), which torch and "
                                "the driver read alike, or unset CUDA_VISIBLE_DEVICES" : "");
}

bool under_ray(const Environment& env) {
  for (const auto& [name, value] : env.vars())
    if (name.rfind("RAY_", 0) == 0) return true;
  return false;
}

// ray#50180, #53643: a task or actor without num_gpus (and placement-group bundles without GPU)
// gets CUDA_VISIBLE_DEVICES="" from Ray.
void ray_gave_no_gpus(const RuleInput& r, Report& report) {
  if (!r.v.visible_set || r.cvd != "" || !under_ray(r.in.env)) return;
  report.add(Severity::kWarning,
             "CUDA_VISIBLE_DEVICES is set but empty under Ray (RAY_* variables present): Ray sets it so for a task, "
             "actor or placement-group bundle that asked for no GPU, so CUDA and torch see none",
             "",
             "ask Ray for the GPUs instead of setting CUDA_VISIBLE_DEVICES yourself: @ray.remote(num_gpus=1), "
             ".options(num_gpus=1), a placement-group bundle {\"GPU\": 1} with the task scheduled into it, or "
             "resources_per_worker={\"GPU\": 1} in Ray Train; Ray then sets CUDA_VISIBLE_DEVICES to the GPUs it gives");
}

// PrincetonUniversity/jobstats#34: Slurm's IDX and dcgm-exporter's job files count /dev/nvidiaN
// minor numbers, which are not nvidia-smi's indices on every host.
void minor_differs_from_index(const RuleInput& r, Report& report) {
  std::vector<std::string> pairs;
  for (const Gpu& g : r.s.gpus)
    if (g.minor_number && *g.minor_number != g.nvml_index)
      pairs.push_back("nvidia-smi GPU " + std::to_string(g.nvml_index) + " is /dev/nvidia" + std::to_string(*g.minor_number));
  if (pairs.empty()) return;
  report.add(Severity::kInfo,
             "on this host the /dev/nvidiaN minor numbers are not nvidia-smi's indices (" + join(pairs, ", ") +
                 "): numbers that come from device files (Slurm's gres IDX and File=, dcgm-exporter's job mapping, "
                 "device cgroups) name other GPUs than the same number in nvidia-smi or CUDA_VISIBLE_DEVICES",
             "", "match GPUs by UUID (gpumap list shows the minor beside each index)");
}

// A framework whose version cannot read UUID entries (resolve/framework_view.h
// framework_uuid_failure): the versions come from the process (Python: sys.modules), never guessed.
void framework_cannot_parse_uuid(const RuleInput& r, Report& report) {
  if (!r.in.frameworks || !r.v.visible_set) return;
  bool uuid = false, mig = false;
  for (const EntryDecision& d : r.v.entries) {
    if (d.entry.kind != CvdEntryKind::kUuid) continue;
    uuid = true;
    mig |= d.entry.raw.compare(0, 4, "MIG-") == 0;
  }
  if (!uuid) return;
  std::vector<std::string> why;
  for (const auto& [name, version] : *r.in.frameworks) {
    std::string w = framework_uuid_failure(name, version, mig);
    if (!w.empty()) why.push_back(w);
  }
  if (why.empty()) return;
  // The same GPUs by index, in nvidia-smi's order, where an index names them (never under MIG).
  std::string fix;
  if (!r.s.any_mig() && r.v.error == CudaInitError::kNone && !r.v.uuids.empty())
    fix = "export " + launch_visibility(r.s, r.v.uuids, CvdForm::kIndex).assignments() + gives_comment(r.s, r.v.uuids);
  report.add(Severity::kError, join(why, "; "), fix,
             r.s.any_mig() ? "under MIG there is no index form: upgrade (torch 2.0 or later; a vLLM that takes --device-ids), "
                             "or give the process its MIG device through the container (NVIDIA_VISIBLE_DEVICES=MIG-...) "
                             "and leave CUDA_VISIBLE_DEVICES unset inside"
                           : "or upgrade the framework (torch 2.0 or later reads UUIDs)");
}

}  // namespace

const std::vector<Rule>& framework_rules() {
  static const std::vector<Rule> table = {
      {"uuid-prefix-breaks-nvml-lookup", uuid_prefix_breaks_nvml_lookup},
      {"torch-count-differs", torch_count_differs},
      {"ray-gave-no-gpus", ray_gave_no_gpus},
      {"minor-differs-from-index", minor_differs_from_index},
      {"framework-cannot-parse-uuid", framework_cannot_parse_uuid},
  };
  return table;
}

}  // namespace gpumap
