#include "resolve/gpu_selector.h"

#include "model/text.h"

#include <cctype>

#include "model/ascii.h"
#include "model/error.h"
#include "model/pci.h"
#include "model/uuid.h"

namespace gpumap {
namespace {

using ascii::lower;

}  // namespace

std::optional<OuterNumber> outer_number(const Snapshot& s, const GpuPlace& where, const std::string& uuid) {
  const Gpu* g = s.find_device(uuid).gpu;
  if (!g) g = s.find_cuda_device(uuid).gpu;
  for (size_t i = 0; g && i < s.gpus.size(); ++i) {
    if (&s.gpus[i] != g) continue;
    if (where.container && where.host_index.size() == s.gpus.size()) return OuterNumber{"host_index", "HOST", where.host_index[i]};
    if (!where.container && i < where.slurm_id.size() && where.slurm_id[i])
      return OuterNumber{"slurm_id", "SLURM ID", *where.slurm_id[i]};
  }
  return std::nullopt;
}

std::string gpu_list(const Snapshot& s, const GpuPlace& where) {
  const bool host_known = where.container && where.host_index.size() == s.gpus.size();
  const bool slurm_known = !where.container && where.slurm_id.size() == s.gpus.size();
  std::string out = where.container ? (host_known ? "The container's GPUs (numbered from 0 inside; the host's number beside):"
                                                  : "The container's GPUs (numbered from 0 inside):")
                    : slurm_known   ? "The GPUs this Slurm step may open (numbered from 0 here; Slurm's global id beside, " +
                                        where.slurm_setting + "):"
                                    : "GPUs on this host:";
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const Gpu& g = s.gpus[i];
    std::string outer = host_known ? "host GPU " + std::to_string(where.host_index[i]) + "  "
                        : slurm_known && where.slurm_id[i] ? "Slurm id " + std::to_string(*where.slurm_id[i]) + "  "
                                                           : "";
    out += "\n  " + std::to_string(g.nvml_index) + "  " + outer + g.uuid + "  " + g.pci_bus_id + "  " + g.name;
    for (const MigDevice& m : g.mig_devices) out += "\n     MIG device " + m.uuid + (m.name.empty() ? "" : "  " + m.name);
  }
  if (s.gpus.empty()) out += " none";
  return out;
}

std::vector<std::string> split_gpu_specs(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

const Gpu* select_one_gpu(const Snapshot& s, const std::string& spec, const GpuPlace& where) {
  if (spec.empty()) throw Error(kExitUsage, "empty GPU name", gpu_list(s, where));
  if (all_digits(spec)) {
    if (spec.size() <= 9) {
      unsigned long idx = std::stoul(spec);
      for (const Gpu& g : s.gpus)
        if (g.nvml_index == idx) return &g;
    }
    // Inside a container a host number is the usual mistake: the GPUs here are renumbered from 0.
    for (size_t i = 0; where.container && i < where.host_index.size() && i < s.gpus.size(); ++i)
      if (std::to_string(where.host_index[i]) == spec)
        throw Error(kExitUsage,
                    "GPU `" + spec + "`: there is no GPU " + spec + " inside this container: its GPUs are renumbered from 0, and " +
                        "host GPU " + spec + " is the container's GPU " + std::to_string(s.gpus[i].nvml_index),
                    "name it " + std::to_string(s.gpus[i].nvml_index) + " or by UUID (" + s.gpus[i].uuid + ")\n" + gpu_list(s, where));
    // In a Slurm step under a device cgroup, Slurm's global id is the usual mistake.
    for (size_t i = 0; !where.container && i < where.slurm_id.size() && i < s.gpus.size(); ++i)
      if (where.slurm_id[i] && std::to_string(*where.slurm_id[i]) == spec)
        throw Error(kExitUsage,
                    "GPU `" + spec + "`: there is no nvidia-smi GPU " + spec + " in this Slurm step: " + spec +
                        " is Slurm's global id (" + where.slurm_setting + "), and a device cgroup leaves the step only its "
                        "own GPUs, numbered from 0: Slurm's GPU " + spec + " is GPU " + std::to_string(s.gpus[i].nvml_index) +
                        " here",
                    "name it " + std::to_string(s.gpus[i].nvml_index) + " or by UUID (" + s.gpus[i].uuid + ")\n" + gpu_list(s, where));
    throw Error(kExitUsage,
                "GPU `" + spec + "`: there is no " + (where.container ? "GPU " + spec + " inside this container" : "nvidia-smi GPU " + spec),
                gpu_list(s, where));
  }
  if (auto pci = parse_pci_address(spec)) {
    for (const Gpu& g : s.gpus)
      if (g.pci && *g.pci == *pci) return &g;
    throw Error(kExitUsage, "GPU `" + spec + "`: no GPU has PCI bus id " + format_pci_nvml(*pci), gpu_list(s, where));
  }
  // A UUID or a prefix of one, with or without "GPU-", any case.
  std::string want = uuid_starts_with(spec, "GPU-") ? spec : "GPU-" + spec;
  std::vector<const Gpu*> hits;
  for (const Gpu& g : s.gpus) {
    if (same_uuid(g.uuid, want)) return &g;
    if (uuid_starts_with(g.uuid, want)) hits.push_back(&g);
  }
  if (hits.size() == 1) return hits[0];
  if (hits.empty())
    throw Error(kExitUsage, "GPU `" + spec + "` names no GPU (not an nvidia-smi index, UUID, UUID prefix or PCI bus id here)",
                gpu_list(s, where));
  std::string which;
  for (const Gpu* g : hits) which += (which.empty() ? "" : ", ") + std::to_string(g->nvml_index);
  throw Error(kExitUsage, "GPU `" + spec + "` is ambiguous: it starts the UUIDs of nvidia-smi GPUs " + which +
                              "; give more of the UUID",
              gpu_list(s, where));
}

std::string select_device(const Snapshot& s, const std::string& spec, const GpuPlace& where) {
  if (!uuid_starts_with(spec, "MIG-")) return select_one_gpu(s, spec, where)->uuid;
  std::vector<const MigDevice*> hits;
  for (const Gpu& g : s.gpus)
    for (const MigDevice& m : g.mig_devices) {
      if (same_uuid(m.uuid, spec)) return m.uuid;
      if (uuid_starts_with(m.uuid, spec)) hits.push_back(&m);
    }
  if (hits.size() == 1) return hits[0]->uuid;
  if (hits.empty())
    throw Error(kExitUsage, "GPU `" + spec + "` names no MIG device here (MIG device UUIDs are listed by `nvidia-smi -L`)",
                gpu_list(s, where));
  throw Error(kExitUsage, "GPU `" + spec + "` is ambiguous: it starts " + std::to_string(hits.size()) +
                              " MIG device UUIDs; give more of the UUID",
              gpu_list(s, where));
}

std::vector<std::string> select_devices(const Snapshot& s, const std::vector<std::string>& specs, const GpuPlace& where) {
  std::vector<std::string> out;
  for (const std::string& spec : specs)
    for (const std::string& one : split_gpu_specs(spec)) out.push_back(select_device(s, one, where));
  return out;
}

void require_distinct(const std::vector<std::string>& uuids) {
  for (size_t i = 0; i < uuids.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (same_uuid(uuids[k], uuids[i]))
        throw Error(kExitUsage, "GPU `" + uuids[i] + "` is named twice: a repeated GPU makes cuInit fail",
                    "name each GPU once");
}

std::vector<const Gpu*> select_gpus(const Snapshot& s, const std::vector<std::string>& specs) {
  std::vector<const Gpu*> out;
  for (const std::string& spec : specs)
    for (const std::string& one : split_gpu_specs(spec)) out.push_back(select_one_gpu(s, one));
  return out;
}

std::optional<unsigned> parse_cuda_ordinal(const std::string& spec) {
  if (spec.size() < 6 || lower(spec.substr(0, 5)) != "cuda:" || !all_digits(spec.substr(5)) || spec.size() > 14)
    return std::nullopt;
  return static_cast<unsigned>(std::stoul(spec.substr(5)));
}

CudaOrdinalAnswer answer_cuda_ordinal(const Snapshot& s, const CudaView& view, const std::string& spec) {
  CudaOrdinalAnswer a;
  a.spec = spec;
  a.cuda_ordinal = parse_cuda_ordinal(spec).value();
  if (view.error != CudaInitError::kNone)
    throw Error(kExitUsage,
                "`" + spec + "`: no cuda:N exists in this environment: cuInit would fail (" +
                    std::string(cuda_error_name(view.error)) + ": " + view.error_reason + ")",
                "run `gpumap doctor` for the fix");
  if (a.cuda_ordinal >= view.uuids.size()) {
    // The usual cause: an nvidia-smi number used as a CUDA ordinal (pipeline(device=2) under
    // CUDA_VISIBLE_DEVICES=4).  Say what the ordinals that exist are, and where that GPU went.
    std::string have = view.uuids.empty()      ? std::string("no GPU")
                       : view.uuids.size() == 1 ? std::string("only cuda:0")
                                                : "only cuda:0..cuda:" + std::to_string(view.uuids.size() - 1);
    std::string are;
    for (size_t i = 0; i < view.uuids.size() && i < 8; ++i)
      are += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + " = " + s.describe_with_uuid(view.uuids[i]);
    std::string hint = view.uuids.empty() ? "this environment hides every GPU; `gpumap map` shows why"
                                          : are + ": CUDA numbers the visible GPUs from 0, so use one of those (cuda:0, device=0)";
    for (const Gpu& g : s.gpus) {
      if (g.nvml_index != a.cuda_ordinal) continue;  // nvidia-smi's GPU of that number, where it went
      std::string where = "not visible to this process";
      for (size_t i = 0; i < view.uuids.size(); ++i)
        if (s.find_cuda_device(view.uuids[i]).gpu == &g) where = "cuda:" + std::to_string(i) + " here";
      hint += "; nvidia-smi GPU " + std::to_string(g.nvml_index) + " is " + where;
    }
    throw Error(kExitUsage, "`" + spec + "` does not exist in this environment: it has " + have, hint);
  }
  a.uuid = view.uuids[a.cuda_ordinal];
  std::string what = "unknown GPU";
  if (Snapshot::DeviceRef d = s.find_cuda_device(a.uuid); d.gpu) {
    const Gpu& g = *d.gpu;
    a.nvml_index = static_cast<int>(g.nvml_index);
    what = d.mig ? "MIG device " + std::to_string(d.mig - g.mig_devices.data()) + " of nvidia-smi GPU " +
                       std::to_string(g.nvml_index) + ", UUID " + d.mig->uuid
                 : "nvidia-smi GPU " + std::to_string(g.nvml_index) + ", UUID " + g.uuid + ", PCI bus id " +
                       g.pci_bus_id + (g.name.empty() ? "" : ", " + g.name);
  }
  a.sentence = "in this environment cuda:" + std::to_string(a.cuda_ordinal) + " is " + what;
  return a;
}

}  // namespace gpumap
