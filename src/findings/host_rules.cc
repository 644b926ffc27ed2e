// Host rules: the host's own numbering against nvidia-smi's (CUDA's FASTEST_FIRST order), the
// container runtime's variable, MIG mode.
#include <algorithm>
#include <cctype>

#include "env/nvidia_visible_devices.h"
#include "findings/rule_table.h"
#include "model/pci.h"
#include "model/text.h"
#include "model/uuid.h"
#include "resolve/base_order.h"
#include "resolve/container_view.h"
#include "resolve/cuda_rules.h"
#include "resolve/mig_limit.h"

namespace gpumap {
namespace {

// CUDA's default order differs from nvidia-smi's, quoting the mapping the table shows.
bool fastest_first_differs(const RuleInput& r) {
  return r.in.fastest_first_order && *r.in.fastest_first_order != pci_order(r.s) &&
         r.v.order.order == DeviceOrder::kFastestFirst && r.v.error == CudaInitError::kNone;
}

void order_differs(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  // On a MIG host no order makes cuda:N nvidia-smi's GPU N (MIG slices are CUDA devices too):
  // PCI_BUS_ID would not help, and mig-enabled gives the reading.
  if (!fastest_first_differs(r) || v.visible_set || r.s.any_mig()) return;
  std::vector<std::string> diffs;
  for (size_t i = 0; i < v.uuids.size(); ++i) {
    int idx = r.s.nvml_index_of(v.uuids[i]);
    if (idx < 0) diffs.push_back("cuda:" + std::to_string(i) + " is a GPU NVML could not identify");
    else if (idx != static_cast<int>(i)) diffs.push_back("cuda:" + std::to_string(i) + " is nvidia-smi GPU " + std::to_string(idx));
  }
  report.add(Severity::kWarning,
             "CUDA's order differs from nvidia-smi's (FASTEST_FIRST puts the fastest GPU first): " + join(diffs, ", ") +
                 ". Code that takes numbers from nvidia-smi lands on the wrong GPU",
             // In a step without a device cgroup, the order alone would leave other jobs' GPUs visible:
             // the allocation's GPUs in PCI order, as slurm-gpus-not-applied's fix.
             r.alloc.restricts ? "export " + launch_visibility(r.s, cuda_devices_of(r.s, r.alloc.uuids), CvdForm::kIndex).assignments()
                               : std::string("export CUDA_DEVICE_ORDER=PCI_BUS_ID"));
}

// UUID entries do not depend on the order; index entries count in CUDA's order.  The one finding
// about the two readings of an index: the fix takes nvidia-smi's (as every other fix of the run
// does), the note the one CUDA uses now, each naming the GPUs it gives.
void visible_devices_without_pci_order(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (!r.ambiguous) return;
  CudaView by_pci = predict_cuda_view(pci_order(r.s), std::string("PCI_BUS_ID"), r.in.env.get("CUDA_VISIBLE_DEVICES"));
  // Neither reading gives a GPU (`4` on four GPUs): there is nothing to choose between, and
  // PCI_BUS_ID would change nothing; list-cut-short and cuda-init-fails say what is wrong.
  bool pci_gives = by_pci.error == CudaInitError::kNone && !by_pci.uuids.empty();
  bool cuda_names = false;  // some entry names a GPU in CUDA's order (a duplicate too)
  for (const EntryDecision& d : v.entries) cuda_names |= !d.uuid.empty();
  if (!cuda_names && meant_gpus(r).empty()) return;
  bool same = by_pci.error == CudaInitError::kNone && v.error == CudaInitError::kNone && by_pci.uuids == v.uuids;
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.uuids.size(); ++i) parts.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(v.uuids[i]));
  std::string gives = v.error == CudaInitError::kNone ? join(parts, ", ") : std::string("no GPU (cuInit fails)");
  std::string note;
  if (!same && v.error == CudaInitError::kNone)
    note = "if the indices were meant in CUDA's own order, keep the GPUs it gives now: export CUDA_VISIBLE_DEVICES=" +
           join(v.uuids, ",") + gives_comment(r.s, v.uuids);
  // The fix only where it gives GPUs: PCI_BUS_ID that leaves cuInit failing helps no one.
  report.add(same ? Severity::kInfo : Severity::kWarning,
             "CUDA_VISIBLE_DEVICES uses indices, and without CUDA_DEVICE_ORDER=PCI_BUS_ID they count in CUDA's "
             "order, not nvidia-smi's: `" + r.cvd + "` gives " + gives +
                 (same ? " (the same GPUs as in nvidia-smi's order here, by luck of which indices were chosen)" : "") +
                 (pci_gives ? ". If they are nvidia-smi's numbers, CUDA_DEVICE_ORDER=PCI_BUS_ID makes them so"
                            : ". Read as nvidia-smi's numbers (CUDA_DEVICE_ORDER=PCI_BUS_ID) cuInit fails too: the "
                              "other findings' fixes give the GPUs that reading means"),
             !pci_gives ? std::string()
             // nvidia-smi's reading lands outside the Slurm allocation: the meant list within it instead.
             : allowed_only(r.s, r.alloc, by_pci.uuids).size() < by_pci.uuids.size()
                 ? meant_fix(r, CvdForm::kIndex, true)
                 : "export CUDA_DEVICE_ORDER=PCI_BUS_ID" + gives_comment(r.s, by_pci.uuids),
             note);
}

// The host GPUs (or MIG devices) an NVIDIA_VISIBLE_DEVICES list names; empty when one names none here.
std::vector<std::string> nvd_devices(const NvidiaVisibleDevices& nvd, const Snapshot& s) {
  std::vector<std::string> out;
  for (const NvdEntry& e : nvd.entries) {
    std::string found;
    for (const Gpu& g : s.gpus) {
      if ((e.kind == NvdEntryKind::kIndex && g.nvml_index == e.index) ||
          (e.kind == NvdEntryKind::kUuid && same_uuid(g.uuid, e.raw)) ||
          (e.kind == NvdEntryKind::kPciAddress && g.pci && g.pci == parse_pci_address(e.raw)))
        found = g.uuid;
      if (e.kind == NvdEntryKind::kMigIndex && g.nvml_index == e.index && e.mig_index < g.mig_devices.size())
        found = g.mig_devices[e.mig_index].uuid;
      for (const MigDevice& m : g.mig_devices)
        if (e.kind == NvdEntryKind::kMigUuid && same_uuid(m.uuid, e.raw)) found = m.uuid;
    }
    if (found.empty()) return {};
    out.push_back(found);
  }
  return out;
}

// NVIDIA_VISIBLE_DEVICES is read by the container runtime only.
void nvidia_visible_devices_outside_container(const RuleInput& r, Report& report) {
  auto value = r.in.env.get("NVIDIA_VISIBLE_DEVICES");
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(value);
  if (nvd.mode == NvdMode::kUnset || r.in.in_container) return;
  std::vector<std::string> named = nvd.mode == NvdMode::kList ? nvd_devices(nvd, r.s) : std::vector<std::string>{};
  std::string fix = "unset NVIDIA_VISIBLE_DEVICES", note;
  // Never turned into a CUDA_VISIBLE_DEVICES outside the allocation (another job's GPU).
  if (allowed_only(r.s, r.alloc, named).size() < named.size()) {
    named.clear();
    note = "NVIDIA_VISIBLE_DEVICES names GPUs outside " + r.alloc.setting() + " (other jobs' GPUs); to choose GPUs of "
           "the allocation, set CUDA_VISIBLE_DEVICES (gpumap which GPU... prints the line)";
  } else if (!named.empty() && !r.v.visible_set)
    fix = "export CUDA_VISIBLE_DEVICES=" + join(named, ",") + "; " + fix + gives_comment(r.s, named);
  else if (!named.empty())
    note = "CUDA_VISIBLE_DEVICES already chooses this process's GPUs; the GPUs NVIDIA_VISIBLE_DEVICES names are "
           "CUDA_VISIBLE_DEVICES=" + join(named, ",");
  else if (note.empty())
    note = "to choose GPUs for this process, set CUDA_VISIBLE_DEVICES (gpumap which GPU... prints the line); for a "
           "container, give NVIDIA_VISIBLE_DEVICES to the container runtime (docker run -e ...)";
  // Set for a container this shell starts (the guide's docker run -e NVIDIA_VISIBLE_DEVICES): what the
  // container will see comes first, so that unset is not taken as the answer to a container question.
  std::string v = value.value_or("");
  bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ',' || c == '-' || c == ':' || c == '.';
  });
  std::string container = "if it is for a container, keep it: gpumap map --env NVIDIA_VISIBLE_DEVICES=" +
                          (plain ? v : std::string("...")) + " shows what the container will see";
  note = note.empty() ? container : container + "; " + note;
  report.add(Severity::kWarning,
             "NVIDIA_VISIBLE_DEVICES=" + v + " is set, but only the container runtime reads it; CUDA and nvidia-smi on this host ignore it",
             fix, note);
}

// What this container can open against what it was given (issue 52 item 3); nullopt outside a
// container or when its facts were not read.
std::optional<ContainerGrant> grant_of(const RuleInput& r) {
  if (!r.in.in_container || !r.in.container) return std::nullopt;
  return container_grant(r.s, *r.in.container, r.in.env);
}

void container_renumbered(const RuleInput& r, Report& report) {
  if (!r.in.in_container || parse_nvidia_visible_devices(r.in.env.get("NVIDIA_VISIBLE_DEVICES")).mode != NvdMode::kList) return;
  // A container that sees more than it was given has GPUs that were not injected: said by
  // container-sees-more-gpus, never "only the injected GPUs exist".
  if (auto g = grant_of(r); g && (g->sees_more() || g->privileged)) return;
  report.add(Severity::kInfo,
             "inside this container the runtime's GPUs are numbered from 0 by nvidia-smi and CUDA; host GPU "
             "numbers do not apply here. The UUIDs and PCI bus ids are the host's: use them to match",
             "");
}

// The knobs that give a container only what it asked for, for the causes found.
std::string narrowing_note(const ContainerGrant& g, bool in_pod) {
  std::vector<std::string> how;
  if (g.privileged)
    how.push_back("drop --privileged (privileged: true in a pod): a privileged container gets every /dev/nvidiaN and a "
                  "device cgroup that allows them all, whatever --gpus, NVIDIA_VISIBLE_DEVICES or the device plugin gave it");
  else if (g.cgroup_allows_all)
    how.push_back("its device cgroup allows every device (`a *:* rwm` or `c 195:*`): start it without a rule that opens "
                  "all devices (--device-cgroup-rule, a runtime hook)");
  if (g.extra_nodes && !g.privileged)
    how.push_back("remove the hostPath /dev (-v /dev:/dev) mount: it brings the /dev/nvidiaN of GPUs the container was not given");
  if (g.envvar_not_from_plugin || in_pod)
    how.push_back("request GPUs with resources.limits nvidia.com/gpu: N; have the device plugin pass them other than by "
                  "the variable (deviceListStrategy / --device-list-strategy volume-mounts or cdi-annotations) and set "
                  "accept-nvidia-visible-devices-envvar-when-unprivileged = false in the container toolkit's config.toml, "
                  "so an image's or pod spec's NVIDIA_VISIBLE_DEVICES no longer gives GPUs");
  else
    how.push_back("give the container its GPUs with --gpus '\"device=...\"' (or NVIDIA_VISIBLE_DEVICES as the runtime "
                  "reads it: UUIDs or host indices; `void` under CDI, where --device nvidia.com/gpu=... gives them)");
  return join(how, "; ");
}

void container_sees_more_gpus(const RuleInput& r, Report& report) {
  std::optional<ContainerGrant> g = grant_of(r);
  if (!g || !g->sees_more()) return;
  bool in_pod = r.in.env.get("KUBERNETES_SERVICE_HOST").has_value();
  std::vector<std::string> causes;
  if (g->privileged) causes.push_back("it is privileged (every capability)");
  else if (g->cgroup_allows_all) causes.push_back("its device cgroup allows every device");
  if (g->extra_nodes && !g->privileged) causes.push_back("/dev/nvidiaN of GPUs it was not given are in it (a hostPath /dev)");
  std::string nvd = r.in.env.get("NVIDIA_VISIBLE_DEVICES").value_or("");
  if (g->envvar_not_from_plugin)
    causes.push_back("NVIDIA_VISIBLE_DEVICES=" + nvd + " comes from the image or the pod spec, not the device plugin (which "
                     "writes UUIDs, or nothing under CDI), and under the envvar strategy the container toolkit gives what it names");
  std::vector<std::string> extra;
  for (const std::string& u : g->extra) extra.push_back(r.s.describe_with_uuid(u));
  std::string what = g->given ? "NVML lists " + std::to_string(g->seen.size()) + " GPU" + (g->seen.size() == 1 ? "" : "s") +
                                    " in this container, but " + g->given_by + " gave it " +
                                    (g->given->empty() ? std::string("none") : join(*g->given, ", ")) + ": " + join(extra, ", ") +
                                    (extra.size() == 1 ? " is" : " are") + " not its own"
                              : "NVML lists " + std::to_string(g->seen.size()) + " GPU" + (g->seen.size() == 1 ? "" : "s") +
                                    " in this container, which may be more than it was given (what it was given cannot be "
                                    "read from inside: " + std::string(r.in.container->cgroup == DeviceCgroup::kV2
                                                                           ? "the cgroup v2 device rules are an eBPF program"
                                                                           : "no allocation is recorded here") + ")";
  if (!causes.empty()) what += ", because " + join(causes, " and ");
  // Within the container, CUDA_VISIBLE_DEVICES narrows this process to what was given (NVML and
  // nvidia-smi still list the rest): once it does, the process is on its own GPUs.
  std::vector<std::string> own;
  if (g->given)
    for (const std::string& e : *g->given) {
      const Gpu* gpu = r.s.find_uuid(e);
      if (gpu && gpu->mig_enabled.value_or(false)) {
        for (const MigDevice& m : gpu->mig_devices) own.push_back(m.uuid);
      } else if (gpu || r.s.find_device(e).mig) {
        own.push_back(gpu ? gpu->uuid : e);
      } else {
        for (const Gpu& x : r.s.gpus)
          if (std::to_string(x.nvml_index) == e) own.push_back(x.uuid);
      }
    }
  if (!own.empty() && r.v.visible_set && r.v.error == CudaInitError::kNone && !r.v.uuids.empty()) {
    bool inside = true;
    for (const std::string& u : r.v.uuids) {
      Snapshot::DeviceRef d = r.s.find_cuda_device(u);
      std::string id = d.mig ? d.mig->uuid : d.gpu ? d.gpu->uuid : u;
      bool found = false;
      for (const std::string& o : own) found |= same_uuid(o, id);
      inside &= found;
    }
    if (inside) return;
  }
  report.add(Severity::kWarning,
             what + ". Code that takes every GPU it finds (device_map=\"auto\", torchrun on all, nvidia-smi's numbers) "
                    "lands on GPUs other jobs were given",
             own.empty() ? std::string() : "export CUDA_VISIBLE_DEVICES=" + join(own, ",") + gives_comment(r.s, own),
             "to keep this process on its own GPUs inside the container, name them in CUDA_VISIBLE_DEVICES by UUID; to "
             "fix the container: " + narrowing_note(*g, in_pod));
}

// "cuda:0 = nvidia-smi GPU 1, cuda:1 = nvidia-smi GPU 0 MIG device 0": what each cuda:N is.
std::string readings(const Snapshot& s, const std::vector<std::string>& uuids) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < uuids.size(); ++i) parts.push_back("cuda:" + std::to_string(i) + " = " + s.describe(uuids[i]));
  return join(parts, ", ");
}

void mig_enabled(const RuleInput& r, Report& report) {
  bool first = true;
  for (const Gpu& g : r.s.gpus) {
    if (!g.mig_enabled.value_or(false)) continue;
    std::string msg = "nvidia-smi GPU " + std::to_string(g.nvml_index) + " is in MIG mode: CUDA shows its MIG devices (" +
                      std::to_string(g.mig_devices.size()) + "), not the GPU; name them by MIG-<uuid>. Drivers before R570 "
                      "give a process exactly one MIG device";
    // Once per host: what the numbers mean here.  An index counts CUDA devices (MIG slices and
    // whole GPUs) in CUDA's order, in either CUDA_DEVICE_ORDER: never nvidia-smi's GPU numbers.
    if (first && r.v.error == CudaInitError::kNone && !r.v.uuids.empty())
      msg += ". On this host cuda:N and CUDA_VISIBLE_DEVICES indices count CUDA devices, MIG slices included, so "
             "they are not nvidia-smi's GPU numbers whatever CUDA_DEVICE_ORDER says (here " + readings(r.s, r.v.uuids) +
             ")";
    first = false;
    report.add(Severity::kInfo, msg, "", "`gpumap which N` (N: the nvidia-smi index) prints the UUID line for a GPU or its MIG devices");
  }
}

// A driver before R570 gives a process exactly one MIG device and no other GPU (resolve/cuda_rules.h
// keep_one_mig_device; docs/driver-rules.md): the list names more than the process gets.
void mig_one_device(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (!r.s.any_mig() || !one_mig_device_per_process(r.s.driver_version) || v.error != CudaInitError::kNone ||
      v.uuids.size() != 1)
    return;
  // What the list gives without the rule (the resolver applied it to r.v): the rest is left out.
  CudaView full = predict_cuda_view(r.in.mapping.base_order, r.in.env.get("CUDA_DEVICE_ORDER"), r.in.env.get("CUDA_VISIBLE_DEVICES"));
  std::vector<std::string> left_out = keep_one_mig_device(full, [&](const std::string& u) { return r.s.find_device(u).mig != nullptr; });
  if (left_out.empty() || full.uuids != v.uuids) return;
  std::vector<std::string> out;
  for (const std::string& u : left_out) out.push_back(r.s.describe(u));
  std::vector<std::string> others;
  for (const std::string& u : left_out)
    if (r.s.find_device(u).mig) others.push_back("CUDA_VISIBLE_DEVICES=" + u);
  report.add(Severity::kWarning,
             "driver " + r.s.driver_version.value_or("") + " (before R570) gives a process exactly one MIG device and no "
             "other GPU: this process gets only cuda:0 = " + r.s.describe(v.uuids[0]) + ", not " + join(out, ", ") +
                 " (device_count() is 1; cuda:1 does not exist)",
             "export CUDA_VISIBLE_DEVICES=" + v.uuids[0] + gives_comment(r.s, v.uuids),
             "choose the MIG device each process uses by its UUID; for the others start one process each (" +
                 (others.empty() ? std::string("gpumap which N prints their lines") : join(others, ", ")) +
                 "); several MIG devices in one process need driver R570 or later");
}

// Index entries on a MIG host that read as nvidia-smi's numbers name other devices than CUDA
// gives (RuleInput::mig_indices): the one finding with both readings.  The fix takes nvidia-smi's
// (by UUID, as `which` and every other fix of the run), the note CUDA's.
void mig_index_entries(const RuleInput& r, Report& report) {
  if (!r.mig_indices) return;
  const CudaView& v = r.v;
  std::string left_out;
  std::vector<std::string> meant = meant_allowed(r, &left_out);
  std::string comment = gives_comment(r.s, meant) + (left_out.empty() ? "" : "; " + left_out);
  std::vector<std::string> smi;
  for (const EntryDecision& d : v.entries) {
    if (d.entry.kind != CvdEntryKind::kInteger) continue;
    if (smi.size() == 5) {  // a long list is not repeated into the message
      smi.push_back("...");
      break;
    }
    std::vector<std::string> as = nvidia_smi_reading(r.s, d.entry.index);
    std::vector<std::string> words;
    for (const std::string& u : as) words.push_back(r.s.describe(u));
    smi.push_back(std::to_string(d.entry.index) + " = " + (as.size() == 1 ? words.front() : join(words, " and ")));
  }
  std::string gives = v.error == CudaInitError::kNone ? readings(r.s, v.uuids) : std::string("no GPU (cuInit fails)");
  std::string note;
  if (v.error == CudaInitError::kNone && !v.uuids.empty())
    note = "if the indices were meant as CUDA's device numbers, keep what they give now: export CUDA_VISIBLE_DEVICES=" +
           join(v.uuids, ",") + gives_comment(r.s, v.uuids);
  report.add(Severity::kWarning,
             "a GPU here is in MIG mode, so CUDA_VISIBLE_DEVICES indices count CUDA devices (MIG slices and whole GPUs, "
             "in CUDA's order), never nvidia-smi's GPUs, whatever CUDA_DEVICE_ORDER says: `" + r.cvd + "` gives " + gives +
                 ", while in nvidia-smi " + join(smi, ", ") + ". Name the devices by UUID (there is no index form under MIG)",
             meant.empty() ? std::string() : "export CUDA_VISIBLE_DEVICES=" + join(meant, ",") + comment,
             note);
}

}  // namespace

const std::vector<Rule>& host_rules() {
  static const std::vector<Rule> table = {
      {"order-differs", order_differs},
      {"visible-devices-without-pci-order", visible_devices_without_pci_order},
      {"nvidia-visible-devices-outside-container", nvidia_visible_devices_outside_container},
      {"container-renumbered", container_renumbered},
      {"container-sees-more-gpus", container_sees_more_gpus},
      {"mig-enabled", mig_enabled},
      {"mig-index-entries", mig_index_entries},
      {"mig-one-device", mig_one_device},
  };
  return table;
}

}  // namespace gpumap
