#include "session/explain.h"

#include "session/container_facts.h"

#include "env/launcher.h"
#include "env/nvidia_visible_devices.h"
#include "findings/rules.h"
#include "resolve/base_order.h"
#include "resolve/container_view.h"
#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

std::string q(const std::string& raw) { return "`" + raw + "`"; }

std::string cut_consequence(const CudaView& v, size_t i) {
  size_t after = v.entries.size() - i - 1;
  std::string c = after ? "CUDA drops it and every entry after it" : "CUDA drops it";
  if (v.uuids.empty()) return c + ", so no GPU is visible";
  return c + ", so cuda:" + std::to_string(v.uuids.size()) + " does not exist";
}

// Inside a container: " (host GPU 3)" for a GPU whose host number is known.
std::string host_gpu(const Snapshot& s, const std::string& uuid, const std::vector<uint32_t>& host_index) {
  int here = s.nvml_index_of(uuid);
  for (size_t i = 0; here >= 0 && i < host_index.size() && i < s.gpus.size(); ++i)
    if (s.gpus[i].nvml_index == static_cast<uint32_t>(here)) return " (host GPU " + std::to_string(host_index[i]) + ")";
  return "";
}

}  // namespace

std::string explain_entry(const Snapshot& s, const CudaView& v, size_t i, const std::vector<uint32_t>& host_index) {
  const EntryDecision& d = v.entries[i];
  std::string at = "entry " + std::to_string(i + 1) + " " + q(d.entry.raw) + " ";
  std::string read;
  switch (d.entry.kind) {
    case CvdEntryKind::kInteger:
      read = d.entry.negative ? std::string("is a negative number") : "is read as index " + std::to_string(d.entry.index);
      break;
    case CvdEntryKind::kUuid: read = "is read as a UUID prefix"; break;
    case CvdEntryKind::kInvalid: read = "is unreadable (" + d.entry.reason + ")"; break;
  }
  if (d.entry.kind != CvdEntryKind::kInvalid && !d.entry.reason.empty() && !d.entry.negative)
    read += " (" + d.entry.reason + ")";
  switch (d.outcome) {
    case EntryOutcome::kVisible:
      if (!d.cuda_ordinal)  // a later entry repeats a GPU: cuInit fails, so no entry becomes a cuda:N
        return at + read + " and names " + s.describe(d.uuid) + ": never used (the list fails: " + v.error_reason + ")";
      return at + read + ": it becomes cuda:" + std::to_string(*d.cuda_ordinal) + " = " + s.describe(d.uuid) + host_gpu(s, d.uuid, host_index);
    case EntryOutcome::kNoMatch: return at + read + " but names no GPU: " + cut_consequence(v, i);
    case EntryOutcome::kAmbiguous:
      return at + read + " that starts " + std::to_string(d.candidates.size()) + " GPUs' UUIDs: " + cut_consequence(v, i);
    case EntryOutcome::kOutOfRange:
      return at + read + (d.entry.negative ? ", which names no GPU: " : ", past the last GPU: ") + cut_consequence(v, i);
    case EntryOutcome::kInvalid: return at + read + ": " + cut_consequence(v, i);
    case EntryOutcome::kMixedKind:
      return at + read + " after entries of the other kind (indices and UUIDs cannot be mixed): " + cut_consequence(v, i);
    case EntryOutcome::kAfterCut: return at + "is never read: the list already ended";
    case EntryOutcome::kDuplicate:
      return at + read + " and names " + s.describe(d.uuid) +
             " again: never used (a repeated GPU makes cuInit fail with CUDA_ERROR_INVALID_DEVICE)";
  }
  return at + read;
}

std::vector<std::string> explain_lines(const Snapshot& s, const Environment& env, const Mapping& m, bool container) {
  std::vector<uint32_t> host_index = container ? host_indices(s, env.get("NVIDIA_VISIBLE_DEVICES")) : std::vector<uint32_t>{};
  std::vector<std::string> out;
  const CudaView& v = m.view;
  auto cdo = env.get("CUDA_DEVICE_ORDER");
  // On identical GPUs FASTEST_FIRST has no fastest: it is PCI order, nvidia-smi's (m.base_order says).
  if (!cdo && v.order.order == DeviceOrder::kFastestFirst && !m.base_order.empty() && m.base_order == pci_order(s))
    out.push_back("CUDA_DEVICE_ORDER is unset: CUDA uses FASTEST_FIRST (fastest GPU first), which on this host is "
                  "nvidia-smi's order too");
  else if (!cdo)
    out.push_back("CUDA_DEVICE_ORDER is unset: CUDA uses FASTEST_FIRST (fastest GPU first, not nvidia-smi's order)");
  else if (v.order.order == DeviceOrder::kInvalid)
    out.push_back("CUDA_DEVICE_ORDER=" + q(*cdo) + " is invalid (" + v.order.reason + "): cuInit fails, no GPU is usable");
  else
    out.push_back("CUDA_DEVICE_ORDER=" + *cdo + ": CUDA counts GPUs " +
                  (v.order.order == DeviceOrder::kPciBusId ? "in PCI bus order (nvidia-smi's order)"
                                                           : "fastest first (may differ from nvidia-smi's order)"));
  auto cvd = env.get("CUDA_VISIBLE_DEVICES");
  if (!cvd) out.push_back("CUDA_VISIBLE_DEVICES is unset: every GPU is visible");
  else {
    out.push_back("CUDA_VISIBLE_DEVICES=" + q(*cvd) + ": split on commas into " + std::to_string(v.entries.size()) +
                  " entr" + (v.entries.size() == 1 ? "y" : "ies"));
    if (v.order.order != DeviceOrder::kInvalid)
      for (size_t i = 0; i < v.entries.size(); ++i) out.push_back("  " + explain_entry(s, v, i, host_index));
  }
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(env.get("NVIDIA_VISIBLE_DEVICES"));
  if (nvd.mode != NvdMode::kUnset) {
    std::string who = container ? "the container runtime read it when this container started"
                                : "only a container runtime reads it (docker --gpus / nvidia-container-toolkit); "
                                  "CUDA and nvidia-smi here ignore it";
    std::string what;
    switch (nvd.mode) {
      case NvdMode::kVoid: what = "no GPUs and no driver in the container"; break;
      case NvdMode::kNone: what = "no GPUs, driver libraries still mounted"; break;
      case NvdMode::kAll: what = "every host GPU is injected"; break;
      case NvdMode::kList: what = "only the listed host GPUs are injected, renumbered from 0 inside"; break;
      default: break;
    }
    out.push_back("NVIDIA_VISIBLE_DEVICES=" + q(env.get("NVIDIA_VISIBLE_DEVICES").value_or("")) + ": " + what + "; " + who);
    for (const NvdEntry& e : nvd.entries) {
      std::string k;
      switch (e.kind) {
        case NvdEntryKind::kIndex: k = "host GPU index " + std::to_string(e.index); break;
        case NvdEntryKind::kUuid: k = "GPU UUID (" + s.describe(e.raw) + ")"; break;
        case NvdEntryKind::kMigUuid: k = "MIG device UUID"; break;
        case NvdEntryKind::kPciAddress: k = "PCI bus id"; break;
        case NvdEntryKind::kMigIndex: k = "MIG device " + std::to_string(e.mig_index) + " of host GPU " + std::to_string(e.index); break;
        case NvdEntryKind::kInvalid: k = "rejected by the runtime (" + e.reason + ")"; break;
      }
      out.push_back("  " + q(e.raw) + ": " + k);
    }
  }
  LauncherEnv l = parse_launcher_env(env);
  for (const LocalRank& r : l.local_ranks) {
    if (!r.error.empty()) out.push_back(r.variable + ": " + r.error);
    else if (r.value) {
      std::string gpu = *r.value < v.uuids.size() ? "cuda:" + std::to_string(*r.value) + " = " + s.describe(v.uuids[*r.value])
                                                  : "cuda:" + std::to_string(*r.value) + ", which does not exist here";
      out.push_back(r.variable + "=" + std::to_string(*r.value) + ": a process number on this node; code that does "
                    "set_device(" + r.variable + ") gets " + gpu);
    }
  }
  if (l.local_world_size)
    out.push_back("LOCAL_WORLD_SIZE=" + std::to_string(*l.local_world_size) + ": processes on this node, each needs its own GPU (" +
                  std::to_string(v.uuids.size()) + " visible)");
  for (const auto& [name, ids] : {std::pair{"SLURM_STEP_GPUS", &l.slurm_step_gpus}, std::pair{"SLURM_JOB_GPUS", &l.slurm_job_gpus}})
    if (*ids)
      out.push_back(std::string(name) + "=" + env.get(name).value_or("") +
                    ": node-global GPU ids for bookkeeping; CUDA never reads them (use cuda:0.. inside the step)");
  if (auto mps = env.get("CUDA_MPS_PIPE_DIRECTORY"))
    out.push_back("CUDA_MPS_PIPE_DIRECTORY=" + *mps + ": this process is an MPS client; the MPS server decides which GPUs exist");
  return out;
}

std::vector<Finding> environment_findings(Session& session, const Environment& env, const Mapping& m) {
  const std::vector<std::string>* ff = m.view.order.order == DeviceOrder::kFastestFirst ? &m.base_order : nullptr;
  std::optional<ContainerFacts> container = container_facts_of(session);
  std::optional<std::map<std::string, std::string>> frameworks = process_frameworks();
  return diagnose({session.snapshot(), env, m, ff, session.in_container(), container ? &*container : nullptr,
                   frameworks ? &*frameworks : nullptr});
}

Explanation explain(Session& session, const Environment& env, bool probe) {
  Explanation e;
  const Snapshot& s = session.snapshot();
  e.snapshot = &s;
  e.environment = env;
  e.mapping = session.mapping(env, probe);
  bool container = session.in_container();
  const Mapping& m = e.mapping;
  e.findings = environment_findings(session, env, m);
  e.lines = explain_lines(s, env, m, container);
  for (size_t i = 0; i < m.view.entries.size(); ++i)
    e.entry_texts.push_back(m.view.order.order == DeviceOrder::kInvalid
                                ? ""
                                : explain_entry(s, m.view, i, container ? host_indices(s, env.get("NVIDIA_VISIBLE_DEVICES"))
                                                                        : std::vector<uint32_t>{}));
  if (m.view.error == CudaInitError::kNone || (m.view.error == CudaInitError::kNoDevice && gpus_hidden_on_purpose(m.view))) {
    e.local_device = choose_local_device(parse_launcher_env(env), m.view.uuids.size(), env.get("CUDA_VISIBLE_DEVICES"));
    const LocalDevice& d = *e.local_device;
    e.lines.push_back(d.cuda_ordinal ? "gpumap.local_device() (one rank's GPU): cuda:" + std::to_string(*d.cuda_ordinal) +
                                           ", because " + d.why
                                     : "gpumap.local_device() (one rank's GPU): none, " + d.message);
  }
  return e;
}

}  // namespace gpumap
