#include "session/self.h"

#include "env/device_value.h"
#include "findings/fix_line.h"
#include "env/launcher.h"
#include "model/error.h"
#include "model/text.h"
#include "session/devices.h"
#include "session/diagnose.h"
#include "session/launch.h"
#include "session/verify.h"
#include "session/which.h"

namespace gpumap {

namespace {

/// What devices(), verify() and locate() need: identities, names, MIG devices.  Not utilisation
/// (3.7 ms per GPU, measured on H200), processes or topology.
constexpr ReadOptions kDevicesRead{.processes = false, .topology = false, .nvlink = false, .mig = true, .utilization = false};

/// The calling process's CUDA: live when CUDA runs here (a real driver, or the simulated one
/// this session serves), else predicted from the environment now.
ProcessCudaFacts cuda_here(Session& s) {
  s.snapshot(kDevicesRead);
  return process_cuda(s, read_self_process(true, s.driver().driver_timeout_s));
}

/// The set-too-late finding when CUDA runs here with other GPUs than the environment names.
std::vector<Finding> late_findings(Session& s, const ProcessCudaFacts& f) {
  return f.live ? process_cuda_findings(s, f) : std::vector<Finding>{};
}

}  // namespace

DevicesAnswer devices_here(Session& session) {
  DevicesAnswer a;
  ProcessCudaFacts f;
  try {
    f = cuda_here(session);
  } catch (const Error& e) {
    // CPU-only on purpose on a machine without the NVIDIA driver: no GPU is the answer asked for
    // (docs/library.md), as it is where the driver is present.
    if (e.exit_code() != kExitNoDriver || !environment_hides_every_gpu(session.env())) throw;
    a.no_driver = std::string("no NVIDIA driver here: ") + e.what();
    return a;
  }
  a.snapshot = &session.snapshot();
  a.live = f.live;
  a.mapping = f.mapping;
  a.where = gpu_place(session, session.env());
  // The same findings as `gpumap doctor` / `map --line` for this environment (set-too-late
  // instead once CUDA runs here: the environment is then no longer what CUDA uses).
  a.findings = process_cuda_findings(session, f);
  const CudaView& v = a.mapping.view;
  if (v.error != CudaInitError::kNone && !(v.error == CudaInitError::kNoDevice && gpus_hidden_on_purpose(v))) {
    std::string name = cuda_error_name(v.error);
    a.refusal = Refusal{kExitCudaWouldFail,
                        "CUDA would fail to initialise here: " + name + " (" + std::to_string(cuda_error_code(v.error)) +
                            "), because " + v.error_reason,
                        "fix or unset CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER before CUDA starts (`gpumap map` shows the details)",
                        name};
  }
  return a;
}

LocalDeviceAnswer local_device_here(Session& session) {
  LocalDeviceAnswer a;
  DevicesAnswer d = devices_here(session);
  a.live = d.live;
  if (d.refusal) {
    a.refusal = d.refusal;
    return a;
  }
  a.visible = d.no_driver.empty() ? d.mapping.view.uuids.size() : 0;
  const Environment& env = session.env();
  a.choice = choose_local_device(parse_launcher_env(env), a.visible, env.get("CUDA_VISIBLE_DEVICES"));
  if (a.choice.code) a.refusal = Refusal{a.choice.code, a.choice.message, a.choice.hint, ""};
  return a;
}

DeviceItemsAnswer check_devices_here(Session& session, const std::vector<DeviceItem>& items) {
  DeviceItemsAnswer a;
  auto refuse = [&](const std::string& message, const std::string& hint) {
    a.refusal = Refusal{kExitUsage, message, hint, ""};
    a.refused_as = "value";
    a.cuda_ordinals.clear();
    return a;
  };
  for (const DeviceItem& item : items) {
    if (item.role != DeviceItem::Role::kValue && !item.number)
      if (auto r = cuda_key_refusal(item.text, item.shown)) return refuse(r->message, r->hint);
    if (item.role == DeviceItem::Role::kPhysicalKey) {
      a.cuda_ordinals.push_back(std::nullopt);
      continue;
    }
    DeviceValue v = item.number ? device_value_of_number(*item.number) : device_value_of_text(item.text);
    if (!v.expected.empty()) return refuse(item.what + ": " + item.shown + " is not " + v.expected, "pass " + v.expected);
    a.cuda_ordinals.push_back(v.cuda_ordinal);
  }
  bool gpus = false;
  for (const auto& o : a.cuda_ordinals) gpus |= o.has_value();
  if (!gpus) return a;
  DevicesAnswer d = devices_here(session);
  a.live = d.live;
  if (d.refusal) {
    a.refusal = d.refusal;
    a.cuda_ordinals.clear();
    return a;
  }
  const std::vector<std::string>& visible = d.mapping.view.uuids;
  size_t n = d.no_driver.empty() ? visible.size() : 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::optional<uint32_t>& o = a.cuda_ordinals[i];
    if (!o || *o < n) continue;
    std::string hint = "device_map values and max_memory keys are CUDA ordinals of this process (0.." +
                       std::to_string(n > 0 ? n - 1 : 0) + "): build them with gpumap.max_memory() or from gpumap.devices()";
    for (size_t k = 0; k < n; ++k)
      if (d.snapshot && d.snapshot->nvml_index_of(visible[k]) == static_cast<int>(*o)) {
        hint = "nvidia-smi GPU " + std::to_string(*o) + " is cuda:" + std::to_string(k) + " in this process: use " +
               std::to_string(k) + " (device_map/max_memory count the GPUs this process sees, from 0)";
        break;
      }
    a.refusal = Refusal{kExitUsage,
                        (items[i].where.empty() ? items[i].what : items[i].where) + ": cuda:" + std::to_string(*o) +
                            " does not exist here (this process sees " + std::to_string(n) + " GPU" + (n == 1 ? "" : "s") + ")",
                        hint, ""};
    a.refused_as = "not-visible";
    a.refused_ordinal = o;
    a.cuda_ordinals.clear();
    return a;
  }
  return a;
}

VerifyAnswer verify_here(Session& session, const std::vector<std::string>& specs, bool prefix) {
  ProcessCudaFacts f = cuda_here(session);
  const Snapshot& snap = session.snapshot();
  VerifyAnswer a = verify_mapping(snap, f.mapping, expected_uuids(snap, specs), prefix);
  a.live = f.live;
  a.findings = late_findings(session, f);
  if (!a.refusal || !f.live) return a;
  // Setting anything now changes nothing: the fix is a relaunch with the variable on the command line.
  Refusal& r = *a.refusal;
  r.message = "CUDA already runs in this process: " + r.message;
  std::string relaunch = assignments_line(a.fix);
  for (const std::string& arg : f.command) relaunch += " " + shell_word(arg);
  r.hint = "CUDA reads CUDA_VISIBLE_DEVICES once, when it starts: relaunch with it on the command line (" + relaunch +
           "), or call gpumap.pin()/set it before anything starts CUDA";
  // The finding itself (a paragraph: what CUDA uses, what the values now would give) is the answer's
  // `findings`; the message stays one line.
  if (!a.findings.empty()) r.message += " (" + a.findings.front().id + ": its variables changed after CUDA started)";
  return a;
}

LocateAnswer locate_here(Session& session, const std::vector<std::string>& specs) {
  ProcessCudaFacts f = cuda_here(session);
  const Snapshot& snap = session.snapshot();
  LocateAnswer a;
  a.live = f.live;
  a.gpus = locate_gpus(snap, f.mapping, specs);
  std::vector<std::string> uuids;
  for (const LocatedGpu& g : a.gpus) uuids.push_back(g.uuid);
  a.cuda_visible_devices = cvd_uuid_form(snap, uuids);
  a.findings = late_findings(session, f);
  return a;
}

PinAnswer pin_here(Session& session, const PickRequest& request, const LeaseOptions& options, LeasedGpus& held) {
  if (cuda_started_here(session.driver().driver_timeout_s))
    throw Error(kExitTooLate, "CUDA is already initialised in this process: CUDA_VISIBLE_DEVICES set now would change nothing",
                "pin before anything starts CUDA (before torch.cuda is used, ideally at the top of the program)");
  held = lease_gpus(session, request, options);
  PinAnswer a;
  a.snapshot = &session.snapshot();
  a.uuids = held.uuids;
  a.lease_dir = held.dir;
  // UUIDs: the program sets them in its own os.environ, where no renumbering can move them.
  LaunchPlan plan = plan_launch(session, held.uuids, {.form = CvdForm::kUuid, .bind_cpus = false, .mark_bound = false});
  a.mapping = session.mapping(plan.env, false);
  a.where = gpu_place(session, session.env());
  a.environment = plan.exports;
  return a;
}

}  // namespace gpumap
