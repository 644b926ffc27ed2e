#include "session/devices.h"

#include "env/cuda_visible_devices.h"
#include "model/uuid.h"
#include "resolve/resolve_mapping.h"
#include "session/verify.h"

namespace gpumap {

bool environment_hides_every_gpu(const Environment& env) {
  std::optional<std::string> cvd = env.get("CUDA_VISIBLE_DEVICES");
  if (!cvd || cvd->size() >= kCudaVisibleDevicesIgnoredBytes) return false;
  return gpus_hidden_on_purpose(true, parse_cuda_visible_devices(*cvd));
}

std::vector<VisibleDevice> visible_devices(const Snapshot& s, const Mapping& m) {
  std::vector<VisibleDevice> out;
  if (m.view.error != CudaInitError::kNone) return out;
  for (size_t i = 0; i < m.view.uuids.size(); ++i) {
    VisibleDevice d;
    d.cuda_ordinal = i;
    d.uuid = m.view.uuids[i];
    // One lookup through the device reference (a CUDA-labelled MIG device under NVML's name).
    Snapshot::DeviceRef ref = s.find_device(nvml_uuid_for(s, d.uuid));
    if (ref.gpu) {
      d.nvml_index = ref.gpu->nvml_index;
      d.pci_bus_id = ref.gpu->pci_bus_id;
      d.name = ref.mig ? ref.mig->name : ref.gpu->name;
    }
    out.push_back(d);
  }
  return out;
}

std::vector<LocatedGpu> locate_gpus(const Snapshot& s, const Mapping& m, const std::vector<std::string>& specs) {
  std::vector<LocatedGpu> out;
  for (const std::string& spec : specs) {
    LocatedGpu l;
    l.spec = spec;
    l.uuid = expected_uuid(s, spec);
    if (const Gpu* g = s.find_device(l.uuid).gpu) l.nvml_index = g->nvml_index;  // expected_uuid named a device
    if (m.view.error == CudaInitError::kNone)
      for (size_t i = 0; i < m.view.uuids.size(); ++i)
        if (same_uuid_hex(m.view.uuids[i], l.uuid)) l.cuda_ordinal = i;
    out.push_back(l);
  }
  return out;
}

}  // namespace gpumap
