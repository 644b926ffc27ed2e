#include "output/json_view.h"

#include "findings/rules.h"
#include "resolve/framework_view.h"

namespace gpumap {

Json document(const Snapshot& s) {
  Json j;
  j["simulated"] = s.simulated;
  j["source"] = s.source;
  return j;
}

Json device_json(const Snapshot& s, const std::string& uuid) {
  // CUDA names a MIG device "GPU-<hex>" when the driver is asked: label it as NVML does.
  Snapshot::DeviceRef d = s.find_device(nvml_uuid_for(s, uuid));
  Json j;
  j["nvml_index"] = d.gpu ? Json(d.gpu->nvml_index) : Json(nullptr);
  j["uuid"] = d.mig ? d.mig->uuid : d.gpu ? d.gpu->uuid : uuid;
  j["pci_bus_id"] = d.gpu ? Json(d.gpu->pci_bus_id) : Json(nullptr);
  if (d.mig) {
    j["name"] = d.mig->name.empty() ? Json(nullptr) : Json(d.mig->name);
    j["memory_total_mib"] = json_or_null(d.mig->memory_total_mib);
    j["memory_used_mib"] = json_or_null(d.mig->memory_used_mib);
    j["mig"] = {{"parent_uuid", d.gpu->uuid},
                {"gpu_instance_id", json_or_null(d.mig->gpu_instance_id)},
                {"compute_instance_id", json_or_null(d.mig->compute_instance_id)}};
  } else {
    j["name"] = d.gpu ? Json(d.gpu->name) : Json(nullptr);
    j["memory_total_mib"] = d.gpu ? json_or_null(d.gpu->memory_total_mib) : Json(nullptr);
    j["memory_used_mib"] = d.gpu ? json_or_null(d.gpu->memory_used_mib) : Json(nullptr);
    j["mig"] = nullptr;
  }
  return j;
}

Json gpu_ref_json(uint32_t nvml_index, const std::string& uuid, const std::string& pci_bus_id,
                  std::optional<uint32_t> minor_number) {
  return {{"nvml_index", nvml_index}, {"uuid", uuid}, {"pci_bus_id", pci_bus_id}, {"minor_number", json_or_null(minor_number)}};
}

Json passed_over_json(const Snapshot& s, const std::vector<Rejection>& rejected) {
  Json a = Json::array();
  for (const Rejection& x : rejected) {
    a.push_back(device_json(s, x.uuid));
    a.back()["reasons"] = x.reasons;
  }
  return a;
}

Json cuda_device_json(const Snapshot& s, size_t ordinal, const std::string& uuid) {
  Json j;
  j["cuda_ordinal"] = ordinal;
  j.update(device_json(s, uuid));
  return j;
}

Json cuda_devices_json(const Snapshot& s, const std::vector<std::string>& uuids, const GpuPlace* where) {
  Json a = Json::array();
  for (size_t i = 0; i < uuids.size(); ++i) {
    a.push_back(cuda_device_json(s, i, uuids[i]));
    if (where)
      if (std::optional<OuterNumber> o = outer_number(s, *where, uuids[i])) a.back()[o->key] = o->value;
  }
  return a;
}

Json mapping_json(const Snapshot& s, const Mapping& m, const GpuPlace* where) {
  Json c;
  bool failed = m.view.error != CudaInitError::kNone;
  c["source"] = m.source;
  c["order"] = device_order_name(m.view.order.order);
  c["error"] = failed ? Json(cuda_error_name(m.view.error)) : Json(nullptr);
  c["error_reason"] = failed ? Json(m.view.error_reason) : Json(nullptr);
  Json devs = cuda_devices_json(s, m.view.uuids, where);
  for (size_t i = 0; i < devs.size() && i < m.driver_devices.size(); ++i) {
    // CUDA's own words, when the driver was asked directly.
    devs[i]["cuda_pci_bus_id"] = m.driver_devices[i].pci_bus_id;
    devs[i]["cuda_name"] = m.driver_devices[i].name;
  }
  c["devices"] = devs;
  c["order_note"] = m.order_note;
  if (m.driver_ms) c["driver_ms"] = *m.driver_ms;
  return c;
}

Json torch_view_json(const Snapshot& s, const Environment& env, const Mapping& m) {
  std::vector<std::string> nvml;
  for (const Gpu& g : s.gpus) nvml.push_back(g.uuid);
  TorchView t = predict_torch_view(nvml, env.get("CUDA_VISIBLE_DEVICES"));
  std::optional<unsigned> n = torch_device_count(t, m.view);
  unsigned driver = driver_device_count(m.view);
  Json j;
  j["version"] = "2.11";
  j["device_count"] = n ? Json(*n) : Json(nullptr);
  j["raises"] = t.raises.empty() ? Json(nullptr) : Json(t.raises);
  j["defers_to_driver"] = t.defers_to_driver;
  j["driver_device_count"] = driver;
  j["agrees"] = !torch_differs_from_driver(t, m.view);
  j["reason"] = t.reason.empty() ? Json(nullptr) : Json(t.reason);
  j["is_available"] = driver > 0;
  j["is_available_nvml_check"] = n ? Json(*n > 0) : Json(nullptr);
  return j;
}

Json gpu_json(const Snapshot& s, const Gpu& g) {
  Json j = device_json(s, g.uuid);
  j["memory_free_mib"] = json_or_null(g.memory_free_mib);
  j["minor_number"] = json_or_null(g.minor_number);
  j["utilization_gpu"] = json_or_null(g.utilization_gpu);
  j["utilization_memory"] = json_or_null(g.utilization_memory);
  if (s.sensors_read) {  // list, metrics: what a monitor shows (null: not supported)
    j["temperature_c"] = json_or_null(g.temperature_c);
    j["power_draw_w"] = json_or_null(g.power_draw_w);
    j["power_limit_w"] = json_or_null(g.power_limit_w);
    j["enforced_power_limit_w"] = json_or_null(g.enforced_power_limit_w);
    j["clock_sm_mhz"] = json_or_null(g.clock_sm_mhz);
    j["clock_memory_mhz"] = json_or_null(g.clock_memory_mhz);
    j["fan_speed_percent"] = json_or_null(g.fan_speed_percent);
    j["pstate"] = g.performance_state ? Json("P" + std::to_string(*g.performance_state)) : Json(nullptr);
    j["ecc_errors_corrected_volatile"] = json_or_null(g.ecc_corrected_volatile);
    j["ecc_errors_uncorrected_volatile"] = json_or_null(g.ecc_uncorrected_volatile);
  }
  j["compute_capability"] = json_or_null(g.compute_capability);
  j["mig_enabled"] = json_or_null(g.mig_enabled);
  Json mig = Json::array();
  for (const MigDevice& m : g.mig_devices) mig.push_back(device_json(s, m.uuid));
  j["mig_devices"] = mig;
  j["process_count"] = g.processes ? Json(g.processes->size()) : Json(nullptr);
  if (g.cpu_affinity) j["cpu_affinity"] = *g.cpu_affinity;
  if (std::vector<NvLinkPeer> peers = nvlink_peers_of(s, g); !peers.empty()) {
    // As documented: one UUID per link (a peer joined by 18 links appears 18 times).
    Json per_link = Json::array();
    for (const NvLinkPeer& p : peers)
      for (uint32_t l = 0; l < p.links; ++l) per_link.push_back(p.uuid);
    j["nvlink_peers"] = per_link;
  }
  if (g.nvswitch_links) j["nvswitch_links"] = *g.nvswitch_links;
  Json notes = Json::array();  // the words only: the contract's string[] (docs/cli.md)
  for (const GpuNote& n : g.notes) notes.push_back(n.text);
  j["notes"] = notes;
  return j;
}

Json snapshot_json(const Snapshot& s) {
  Json j = document(s);
  j["driver_version"] = json_or_null(s.driver_version);
  j["cuda_driver_version"] = json_or_null(s.cuda_driver_version);
  j["nvml_symbols"] = s.bindings;  // which versioned NVML symbol bound for each call
  Json gpus = Json::array();
  for (const Gpu& g : s.gpus) gpus.push_back(gpu_json(s, g));
  j["gpus"] = gpus;
  return j;
}

Json asked_cuda_json(const std::vector<CudaOrdinalAnswer>& asked) {
  Json a = Json::array();
  for (const CudaOrdinalAnswer& x : asked)
    a.push_back({{"spec", x.spec}, {"cuda_ordinal", x.cuda_ordinal}, {"uuid", x.uuid},
                 {"nvml_index", x.nvml_index >= 0 ? Json(x.nvml_index) : Json(nullptr)}, {"text", x.sentence}});
  return a;
}

Json launch_json(const Snapshot& s, const std::vector<std::string>& uuids,
                 const std::vector<std::pair<std::string, std::string>>& exports) {
  Json j = document(s);
  Json devs = cuda_devices_json(s, uuids);
  for (Json& d : devs) {
    Snapshot::DeviceRef ref = s.find_device(d["uuid"].get<std::string>());
    d["memory_free_mib"] = ref.gpu && !ref.mig ? json_or_null(ref.gpu->memory_free_mib) : Json(nullptr);
    d["cpu_affinity"] = ref.gpu ? json_or_null(ref.gpu->cpu_affinity) : Json(nullptr);  // a MIG device: its parent's
  }
  j["devices"] = devs;
  Json ex = Json::object();
  for (const auto& [k, v] : exports) ex[k] = v;
  j["exports"] = ex;
  return j;
}

Json environment_json(const Environment& env) {
  Json vars = Json::object();
  for (const std::string& n : relevant_variables()) vars[n] = json_or_null(env.get(n));
  return vars;
}

Json findings_json(const std::vector<Finding>& fs) {
  Json a = Json::array();
  for (const Finding& f : fs) {
    a.push_back({{"id", f.id}, {"severity", severity_name(f.severity)}, {"message", f.message}, {"fix", f.fix}});
    if (!f.note.empty()) a.back()["note"] = f.note;  // advice that is not a command, where there is some
    if (!f.also.empty()) {  // the findings of the same cause, folded into this one (findings/fold.h)
      Json also = Json::array();
      for (const FoldedFinding& x : f.also) also.push_back({{"id", x.id}, {"message", x.message}});
      a.back()["also"] = also;
    }
  }
  return a;
}

Json lease_json(const LeaseRecord& r) {
  return {{"held", true}, {"pid", r.pid}, {"user", r.user}, {"command", r.command}, {"start_unix", r.start_unix}};
}

Json lease_json(const LeaseState& st) {
  if (!st.refused.empty())  // not free either: `run` refuses this lock file (the table says "unsafe lock file")
    return {{"held", false}, {"pid", nullptr}, {"user", nullptr}, {"command", nullptr}, {"start_unix", nullptr},
            {"unsafe", st.refused}};
  if (!st.held) return nullptr;
  if (st.holder) return lease_json(*st.holder);
  return {{"held", true}, {"pid", nullptr}, {"user", nullptr}, {"command", nullptr}, {"start_unix", nullptr}};
}

}  // namespace gpumap
