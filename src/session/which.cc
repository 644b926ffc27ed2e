#include "session/which.h"

#include "model/error.h"
#include "model/text.h"
#include "model/uuid.h"
#include "resolve/container_view.h"
#include "resolve/mig_limit.h"

namespace gpumap {

std::vector<std::string> cuda_targets(const Snapshot& s, const std::vector<std::string>& uuids) {
  std::vector<std::string> out;
  for (const std::string& u : uuids) {
    const Gpu* g = s.find_uuid(u);
    if (g && g->mig_enabled.value_or(false) && !g->mig_devices.empty())
      for (const MigDevice& m : g->mig_devices) out.push_back(m.uuid);
    else
      out.push_back(u);
  }
  return out;
}

GpuPlace gpu_place(Session& session, const Environment& env) {
  const Snapshot& s = session.snapshot();
  GpuPlace where{session.in_container(), {}};
  // Inside a container its GPUs are listed as such, with the host's numbers where they can be told.
  if (where.container) where.host_index = host_indices(s, env.get("NVIDIA_VISIBLE_DEVICES"));
  Allocation alloc = session.allocation(env);
  if (alloc.reading == SlurmIdReading::kMinors) {
    for (const Gpu& g : s.gpus) where.slurm_id.push_back(alloc.slurm_id_of(g.uuid));
    where.slurm_setting = alloc.setting();
  }
  return where;
}

WhichAnswer which_gpus(Session& session, const Environment& env, const std::vector<std::string>& specs) {
  if (specs.empty())
    throw Error(kExitUsage, "which needs at least one GPU",
                "e.g. gpumap which 2 3   (nvidia-smi indices, UUIDs or unique prefixes, MIG device UUIDs, or PCI bus ids)");
  const Snapshot& s = session.snapshot();
  WhichAnswer a;
  a.mapping = session.mapping(env, false);
  // "cuda:N" names what cuda:N is in this environment (the mapping `map` shows).
  std::vector<std::string> named = specs;
  for (std::string& spec : named)
    if (parse_cuda_ordinal(spec)) {
      a.asked_cuda.push_back(answer_cuda_ordinal(s, a.mapping.view, spec));
      spec = a.asked_cuda.back().uuid;
    }
  GpuPlace where = gpu_place(session, env);
  a.asked = select_devices(s, named, where);
  Allocation alloc = session.allocation(env);
  std::vector<std::string> outside, inside;
  for (const std::string& u : a.asked)
    if (!alloc.allows(s, u)) outside.push_back(s.describe_with_uuid(u));
  for (const std::string& u : alloc.uuids) inside.push_back(std::to_string(s.nvml_index_of(u)));
  if (!outside.empty())
    throw Error(kExitUnavailable,
                "which: " + join(outside, ", ") + (outside.size() == 1 ? " is" : " are") + " outside this Slurm " +
                    (alloc.variable == "SLURM_STEP_GPUS" ? "step" : "job") + "'s allocation, " + alloc.words(s) +
                    ": without a device cgroup nothing stops a program here from using it, and it is another job's GPU",
                "ask for GPUs of the allocation: gpumap which " + join(inside, " ") + " (or run outside this job)");
  // `which 1 1`: the error names what was typed, and the GPU both name.
  std::vector<std::string> typed;
  for (const std::string& n : named)
    for (const std::string& one : split_gpu_specs(n)) typed.push_back(one);
  for (size_t i = 0; i < a.asked.size() && typed.size() == a.asked.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (same_uuid(a.asked[k], a.asked[i]))
        throw Error(kExitUsage,
                    "which: `" + typed[k] + "` and `" + typed[i] + "` name the same GPU, " + s.describe_with_uuid(a.asked[i]) +
                        ", so it is named twice: a repeated GPU makes cuInit fail",
                    "name each GPU once");
  a.targets = cuda_targets(s, a.asked);
  require_distinct(a.targets);
  // A driver before R570 gives a process exactly one MIG device (docs/driver-rules.md): a line naming
  // more would give only the first, so each device is its own process's line.
  if (a.targets.size() > 1 && one_mig_device_per_process(s.driver_version)) {
    bool mig = false;
    for (const std::string& t : a.targets) mig |= s.find_device(t).mig != nullptr;
    if (mig)
      throw Error(kExitUsage,
                  "which: driver " + s.driver_version.value_or("") + " (before R570) gives a process exactly one MIG device "
                  "and no other GPU, so no one line gives " + join(a.targets, ", ") + " together",
                  "ask for one device per process: gpumap which " + a.targets.front() + " (then the next, in its own "
                  "process); several MIG devices in one process need driver R570 or later");
  }
  for (const std::string& t : a.targets) a.pci_positions.push_back(pci_index_of(s, t));  // none for MIG devices

  a.by_uuid = launch_visibility(s, a.targets, CvdForm::kUuid);
  LaunchVisibility by_index = launch_visibility(s, a.targets, CvdForm::kIndex);
  if (by_index.form == CvdForm::kIndex) a.by_index = by_index;
  else if (s.any_mig())
    a.no_index_reason = "MIG devices have no index, and on a host with MIG enabled gpumap does not predict CUDA's "
                        "indices; drivers before R570 give a process only the first MIG device listed";
  else
    a.no_index_reason = by_index.note;
  // docker --gpus injects the set; inside, the runtime numbers them from 0 in PCI order, so a
  // second GPU keeps its place only by naming them again (host UUIDs stay valid inside).
  const std::string& uuids = a.by_uuid.cuda_visible_devices;
  a.docker_run = "docker run --gpus '\"device=" + uuids + "\"'" +
                 (a.targets.size() > 1 ? " -e CUDA_VISIBLE_DEVICES=" + uuids : "");

  const CudaView& v = a.mapping.view;
  for (const std::string& u : a.asked) {
    const Gpu* g = s.find_uuid(u);
    std::string host;  // inside a container: the host's number beside the container's
    for (size_t i = 0; g && i < where.host_index.size() && i < s.gpus.size(); ++i)
      if (&s.gpus[i] == g) host = ", host GPU " + std::to_string(where.host_index[i]);
    for (size_t i = 0; g && i < where.slurm_id.size() && i < s.gpus.size(); ++i)
      if (&s.gpus[i] == g && where.slurm_id[i]) host = ", Slurm id " + std::to_string(*where.slurm_id[i]);
    std::string line = s.describe(u) + " (" + u + (g ? ", " + g->pci_bus_id : "") + host + "): ";
    std::optional<size_t> now;
    for (size_t i = 0; i < v.uuids.size(); ++i)
      if (same_uuid_hex(v.uuids[i], u)) now = i;
    if (v.error != CudaInitError::kNone) line += std::string("none now (cuInit would fail: ") + cuda_error_name(v.error) + ")";
    else if (now) line += "cuda:" + std::to_string(*now) + " in the current environment";
    else if (g && g->mig_enabled.value_or(false)) line += "in MIG mode: CUDA shows its MIG devices, not the GPU";
    else line += "not visible in the current environment";
    a.now.push_back(line);
  }
  a.snapshot = &session.snapshot();
  return a;
}

}  // namespace gpumap
