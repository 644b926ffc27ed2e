#include "formats/pod_resources.h"

#include "model/error.h"
#include "model/exit_codes.h"

namespace gpumap {

namespace {

Json devices_json(const std::vector<PodDevices>& ds) {
  Json out = Json::array();
  for (const PodDevices& d : ds) out.push_back({{"resource", d.resource}, {"ids", d.ids}});
  return out;
}

[[noreturn]] void bad(const std::string& what) {
  throw Error(kExitError, "the pod-resources reader answered a document gpumap cannot read: " + what,
              "gpumap-kubelet and gpumap come from one build: reinstall them together");
}

std::string text(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) bad(std::string("no string \"") + key + "\"");
  return j[key].get<std::string>();
}

std::vector<PodDevices> parse_devices(const Json& j) {
  if (!j.is_array()) bad("devices are not a list");
  std::vector<PodDevices> out;
  for (const Json& d : j) {
    PodDevices pd{text(d, "resource"), {}};
    if (!d.contains("ids") || !d["ids"].is_array()) bad("a device entry has no ids");
    for (const Json& id : d["ids"]) {
      if (!id.is_string()) bad("a device id is not a string");
      pd.ids.push_back(id.get<std::string>());
    }
    out.push_back(std::move(pd));
  }
  return out;
}

}  // namespace

Json pod_resources_json(const PodResources& r) {
  Json pods = Json::array();
  for (const PodInfo& p : r.pods) {
    Json containers = Json::array();
    for (const PodContainer& c : p.containers)
      containers.push_back({{"name", c.name}, {"devices", devices_json(c.devices)}, {"cdi_devices", c.cdi_devices}});
    pods.push_back({{"name", p.name}, {"namespace", p.ns}, {"containers", containers}});
  }
  Json cdi_devices = Json::array(), problems = Json::array();
  for (const CdiDevice& d : r.cdi.devices)
    cdi_devices.push_back({{"name", d.name}, {"device_nodes", d.device_nodes}, {"file", d.file}});
  for (const CdiSpecs::Problem& p : r.cdi.problems) problems.push_back({{"file", p.file}, {"message", p.message}});
  return {{"socket", r.socket},
          {"pods", pods},
          {"allocatable", r.allocatable ? devices_json(*r.allocatable) : Json(nullptr)},
          {"cdi", {{"dirs", r.cdi.dirs}, {"devices", cdi_devices}, {"problems", problems}}}};
}

Json pod_resources_error_json(const std::string& socket, const PodResourcesError& e) {
  return {{"socket", socket}, {"error", {{"code", e.code}, {"message", e.message}}}};
}

PodResourcesRead parse_pod_resources(const std::string& input) {
  Json j = Json::parse(input, nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad("not a JSON object");
  PodResourcesRead out;
  if (j.contains("error")) {
    out.error = PodResourcesError{text(j["error"], "code"), text(j["error"], "message")};
    return out;
  }
  PodResources r;
  r.socket = text(j, "socket");
  if (!j.contains("pods") || !j["pods"].is_array()) bad("no pods list");
  for (const Json& p : j["pods"]) {
    PodInfo pi{text(p, "name"), text(p, "namespace"), {}};
    if (!p.contains("containers") || !p["containers"].is_array()) bad("a pod has no containers list");
    for (const Json& c : p["containers"]) {
      PodContainer pc{text(c, "name"), parse_devices(c.value("devices", Json::array())), {}};
      for (const Json& n : c.value("cdi_devices", Json::array())) {
        if (!n.is_string()) bad("a CDI device name is not a string");
        pc.cdi_devices.push_back(n.get<std::string>());
      }
      pi.containers.push_back(std::move(pc));
    }
    r.pods.push_back(std::move(pi));
  }
  if (j.contains("allocatable") && !j["allocatable"].is_null()) r.allocatable = parse_devices(j["allocatable"]);
  if (j.contains("cdi")) {
    const Json& c = j["cdi"];
    auto strings = [&](const Json& o, const char* key) {
      std::vector<std::string> list;
      if (!o.contains(key) || !o[key].is_array()) bad(std::string("cdi: no list \"") + key + "\"");
      for (const Json& v : o[key]) {
        if (!v.is_string()) bad(std::string("cdi: a ") + key + " entry is not a string");
        list.push_back(v.get<std::string>());
      }
      return list;
    };
    if (!c.is_object()) bad("cdi is not an object");
    r.cdi.dirs = strings(c, "dirs");
    for (const Json& d : c.value("devices", Json::array()))
      r.cdi.devices.push_back({text(d, "name"), strings(d, "device_nodes"), text(d, "file")});
    for (const Json& p : c.value("problems", Json::array())) r.cdi.problems.push_back({text(p, "file"), text(p, "message")});
  }
  out.answer = std::move(r);
  return out;
}

}  // namespace gpumap
