#include "resolve/resolve_mapping.h"

#include <algorithm>
#include <unordered_set>

#include "model/error.h"
#include "model/uuid.h"
#include "resolve/mig_limit.h"

namespace gpumap {

std::string nvml_uuid_for(const Snapshot& s, const std::string& cuda_uuid) {
  Snapshot::DeviceRef d = s.find_cuda_device(cuda_uuid);
  return d.mig ? d.mig->uuid : d.gpu ? d.gpu->uuid : cuda_uuid;
}

std::vector<const Gpu*> gpus_not_visible(const Snapshot& s, const CudaView& view) {
  // same_uuid_hex through a set of the visible devices' hex digits: linear in GPUs (issue 34
  // point 9: the pairwise test took most of `map`'s 235 s on 16 384 GPUs).
  std::unordered_set<std::string> visible;
  visible.reserve(view.uuids.size());
  for (const std::string& u : view.uuids) visible.insert(uuid_hex(u));
  std::vector<const Gpu*> out;
  for (const Gpu& g : s.gpus) {
    bool seen = !g.uuid.empty() && visible.count(uuid_hex(g.uuid));
    for (const MigDevice& md : g.mig_devices) seen = seen || visible.count(uuid_hex(md.uuid));
    if (!seen) out.push_back(&g);
  }
  return out;
}

namespace {

std::vector<std::string> from_probe(const Snapshot& s, const CudaProbe& p) {
  std::vector<std::string> out;
  for (const CudaDevice& d : p.devices) out.push_back(nvml_uuid_for(s, d.uuid));
  return out;
}

Environment without_visibility(const Environment& env, DeviceOrder order) {
  Environment e = env;
  e.unset("CUDA_VISIBLE_DEVICES");
  e.set("CUDA_DEVICE_ORDER", device_order_name(order));
  return e;
}

}  // namespace

Mapping live_mapping(const Snapshot& s, const CudaProbe& live) {
  Mapping m;
  m.source = "live";
  m.order_note = "CUDA already runs in this process: its devices, read from the driver";
  m.driver_ms = live.elapsed_ms;
  m.view.uuids = from_probe(s, live);
  m.driver_devices = live.devices;
  m.base_order = m.view.uuids;
  return m;
}

Mapping resolve_mapping(const Snapshot& s, const Environment& env, const MappingOptions& opt, const DriverAsk& ask) {
  Mapping m;
  auto cdo = env.get("CUDA_DEVICE_ORDER");
  auto cvd = env.get("CUDA_VISIBLE_DEVICES");
  DeviceOrderSetting setting = parse_cuda_device_order(cdo);
  std::vector<std::string> base;
  m.source = "predicted";
  // A driver before R570 gives a process one MIG device (resolve/mig_limit.h): asked with the
  // variable unset it lists one, never the order of all, so the order is NVML's (MIG devices in
  // place of their GPU), and the rule is applied to the prediction below.
  const bool one_mig = s.any_mig() && one_mig_device_per_process(s.driver_version);
  if (setting.order == DeviceOrder::kInvalid) {
    m.order_note = "CUDA_DEVICE_ORDER is invalid, so no order applies";
  } else if (one_mig) {
    base = pci_order(s);
    m.order_note = "driver " + s.driver_version.value_or("") + " (before R570) gives a process one MIG device: PCI bus order, "
                   "MIG devices in place of their GPU, from NVML";
  } else if (order_is_exact(s, setting.order)) {
    base = pci_order(s);
    m.order_note = setting.order == DeviceOrder::kPciBusId
                       ? "PCI_BUS_ID: PCI bus order, from NVML"
                       : "FASTEST_FIRST on identical GPUs: PCI bus order (measured), from NVML";
  } else {
    OrderCacheKey key;
    key.boot_id = opt.boot_id;
    key.driver_version = s.driver_version.value_or("");
    key.order = device_order_name(setting.order);
    for (const Gpu& g : s.gpus) {
      key.uuids.push_back(g.uuid);
      for (const MigDevice& md : g.mig_devices) key.uuids.push_back(md.uuid);
    }
    if (auto cached = opt.cache_lookup ? opt.cache_lookup(key) : std::nullopt) {
      base = *cached;
      m.source = "cache";
      m.order_note = std::string(device_order_name(setting.order)) + " order read from the driver earlier this boot (cache)";
    } else {
      CudaProbe p = ask(without_visibility(env, setting.order));
      m.driver_ms = p.elapsed_ms;
      if (!p.error.empty())
        throw Error(kExitError, "the CUDA driver failed to list its devices with CUDA_VISIBLE_DEVICES unset: " + p.error,
                    "run `nvidia-smi` to check the driver; `gpumap list` still works without CUDA");
      base = from_probe(s, p);
      if (opt.subset)
        base.erase(std::remove_if(base.begin(), base.end(), [&](const std::string& u) { return !s.find_device(u).gpu; }),
                   base.end());
      if (opt.cache_store) opt.cache_store(key, base);
      m.source = "driver";
      m.order_note = std::string(device_order_name(setting.order)) + " order asked from the driver (mixed models or MIG)";
    }
  }
  m.base_order = base;
  if (opt.probe) {
    CudaProbe p = ask(env);
    m.driver_ms = p.elapsed_ms;
    CudaView model = predict_cuda_view(base, cdo, cvd);  // entry reasons still come from the model
    m.view = model;
    m.view.uuids = from_probe(s, p);
    m.driver_devices = p.devices;
    m.view.error = cuda_error_from_name(p.error);
    if (m.view.error != CudaInitError::kNone && m.view.error_reason.empty())
      m.view.error_reason = m.view.error == CudaInitError::kDriverCrash
                                ? "cuInit never returned: the probe child died of signal " + std::to_string(-p.error_code) +
                                      " inside the CUDA driver"
                                : "cuInit returned " + p.error;
    if (m.view.error == CudaInitError::kNone) m.view.error_reason.clear();
    m.source = "driver";
    m.order_note = "asked the driver with this environment (--probe)";
    return m;
  }
  m.view = predict_cuda_view(base, cdo, cvd);
  if (one_mig) keep_one_mig_device(m.view, [&](const std::string& u) { return s.find_device(u).mig != nullptr; });
  return m;
}

}  // namespace gpumap
