#include "output/self_view.h"

#include "model/uuid.h"
#include "output/json_view.h"
#include "resolve/renumbering.h"

namespace gpumap {

namespace {

const char* source_of(bool live) { return live ? "live" : "predicted"; }

/// The devices of a mapping, as `map --json` writes them (with the outer numbers); [] when CUDA
/// would fail.
Json devices_of(const Snapshot* s, const Mapping& m, const GpuPlace& where) {
  if (!s || m.view.error != CudaInitError::kNone) return Json::array();
  return cuda_devices_json(*s, m.view.uuids, &where);
}

/// renumbering_line of a mapping's devices; null when it is the identity or CUDA would fail.
Json renumbering_of(const Snapshot* s, const Mapping& m, const GpuPlace& where) {
  if (!s || m.view.error != CudaInitError::kNone) return nullptr;
  std::string line = renumbering_line(*s, m.view.uuids, where);
  return line.empty() ? Json(nullptr) : Json(line);
}

Json variables(const std::vector<std::pair<std::string, std::string>>& vars) {
  Json j = Json::object();
  for (const auto& [name, value] : vars) j[name] = value;
  return j;
}

}  // namespace

Json refusal_json(const Refusal& r) {
  Json j = {{"code", r.code}, {"message", r.message}, {"hint", r.hint}};
  if (!r.cuda_error.empty()) j["cuda_error"] = r.cuda_error;
  return j;
}

Json devices_answer_json(const DevicesAnswer& a) {
  if (!a.no_driver.empty())
    return {{"devices", Json::array()}, {"source", "predicted"}, {"order_source", nullptr}, {"order_note", a.no_driver},
            {"findings", Json::array()}};
  return {{"devices", devices_of(a.snapshot, a.mapping, a.where)},
          {"source", source_of(a.live)},
          {"order_source", a.mapping.source},
          {"order_note", a.mapping.order_note},
          {"findings", findings_json(a.findings)}};
}

Json local_device_json(const LocalDevice& d) {
  Json rank = nullptr;
  if (d.rank) rank = {{"variable", d.rank->variable}, {"value", json_or_null(d.rank->value)}};
  return {{"device", d.cuda_ordinal ? Json("cuda:" + std::to_string(*d.cuda_ordinal)) : Json(nullptr)},
          {"cuda_ordinal", json_or_null(d.cuda_ordinal)},
          {"local_rank", rank},
          {"why", d.why},
          {"error", d.code ? refusal_json(Refusal{d.code, d.message, d.hint, ""}) : Json(nullptr)}};
}

Json local_device_answer_json(const LocalDeviceAnswer& a) {
  Json j = local_device_json(a.choice);
  j["source"] = source_of(a.live);
  j["visible"] = a.visible;
  return j;
}

Json device_items_json(const DeviceItemsAnswer& a) {
  Json ordinals = Json::array();
  for (const auto& o : a.cuda_ordinals) ordinals.push_back(json_or_null(o));
  return {{"cuda_ordinals", ordinals}, {"source", source_of(a.live)}};
}

Json device_items_refusal_json(const DeviceItemsAnswer& a) {
  Json j = a.refusal ? refusal_json(*a.refusal) : Json::object();
  if (!a.refused_as.empty()) j["kind"] = a.refused_as;
  if (a.refused_ordinal) j["ordinal"] = *a.refused_ordinal;
  return j;
}

Json verify_answer_json(const VerifyAnswer& a) {
  return {{"ok", !a.refusal},
          {"source", source_of(a.live)},
          {"expected", a.expected},
          {"actual", a.mapping.view.uuids},
          {"differences", a.differences},
          {"fix", a.fix.empty() ? Json(nullptr) : variables(a.fix)},
          {"findings", findings_json(a.findings)}};
}

Json verify_refusal_json(const VerifyAnswer& a) {
  Json j = a.refusal ? refusal_json(*a.refusal) : Json::object();
  j["source"] = source_of(a.live);
  j["differences"] = a.differences;
  j["fix"] = a.fix.empty() ? Json(nullptr) : variables(a.fix);
  j["findings"] = findings_json(a.findings);
  return j;
}

Json locate_answer_json(const LocateAnswer& a) {
  Json gpus = Json::array();
  for (const LocatedGpu& l : a.gpus)
    gpus.push_back({{"spec", l.spec}, {"uuid", l.uuid}, {"nvml_index", l.nvml_index}, {"cuda_ordinal", json_or_null(l.cuda_ordinal)}});
  return {{"gpus", gpus},
          {"source", source_of(a.live)},
          {"environment", {{"CUDA_VISIBLE_DEVICES", a.cuda_visible_devices}}},
          {"findings", findings_json(a.findings)}};
}

namespace {

Json variables_json(const std::optional<Environment>& env) {
  if (!env) return nullptr;
  Json j = Json::object();
  for (const std::string& name : relevant_variables())
    if (auto v = env->get(name)) j[name] = *v;
  return j;
}

}  // namespace

Json diagnosis_json(const Diagnosis& d) {
  const Mapping& m = d.cuda.mapping;
  Json memory = Json::array();
  for (const auto& [uuid, mib] : d.program.memory_mib) {
    Json g = d.snapshot ? device_json(*d.snapshot, uuid) : Json({{"uuid", uuid}});
    std::optional<size_t> ordinal;
    for (size_t i = 0; i < m.view.uuids.size(); ++i)
      if (same_uuid_hex(m.view.uuids[i], uuid)) ordinal = i;
    g["cuda_ordinal"] = json_or_null(ordinal);
    g["used_memory_mib"] = mib;
    memory.push_back(g);
  }
  Json cuda_error = m.view.error == CudaInitError::kNone
                        ? Json(nullptr)
                        : Json({{"name", cuda_error_name(m.view.error)}, {"reason", m.view.error_reason}});
  int errors = 0;
  for (const Finding& f : d.findings) errors += f.severity == Severity::kError;
  return {{"ok", errors == 0},
          {"source", source_of(d.cuda.live)},
          {"pid", d.pid},
          {"environment", {{"now", variables_json(d.cuda.now)}, {"start", variables_json(d.cuda.start)}}},
          {"devices", devices_of(d.snapshot, m, d.where)},
          {"cuda_error", cuda_error},
          {"cuda_device_count", d.devices.size()},
          {"host_gpu_count", d.host_gpus},
          {"memory", memory},
          {"memory_known", d.program.memory_known},
          {"unlisted_gpus", d.unlisted_gpus},
          {"findings", findings_json(d.findings)},
          {"renumbering", renumbering_of(d.snapshot, m, d.where)}};
}

Json pin_answer_json(const PinAnswer& a, int lease) {
  return {{"lease", lease},
          {"lease_dir", a.lease_dir},
          {"devices", devices_of(a.snapshot, a.mapping, a.where)},
          {"environment", variables(a.environment)}};
}

}  // namespace gpumap
